// Runs a libFuzzer target's entry point on files, without libFuzzer: the normal build links
// each fuzz target with this main, and CTest replays every seed and every committed
// regression (tests/fuzz/regressions/TARGET) through it. An input that crashes, aborts or
// lets an unexpected exception escape fails the test, naming the file.
// Usage: etsim_replay_TARGET FILE_OR_FOLDER...

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void replay(const std::filesystem::path& file, std::size_t& count)
{
    std::ifstream in(file, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    std::cerr << "replaying " << file.string() << " (" << bytes.size() << " B)\n";
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++count;
}

} // namespace

int main(int argc, char** argv)
{
    std::size_t count = 0;
    for (int index = 1; index < argc; ++index) {
        const std::filesystem::path path = argv[index];
        if (std::filesystem::is_directory(path)) {
            for (const auto& entry : std::filesystem::recursive_directory_iterator(path))
                if (entry.is_regular_file() && entry.path().filename() != "README.md")
                    replay(entry.path(), count);
        } else if (std::filesystem::exists(path)) {
            replay(path, count);
        }
    }
    std::cout << count << " inputs replayed, none crashed\n";
    return 0;
}
