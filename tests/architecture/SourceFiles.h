#pragma once
// The C++ source files the architecture tests read: every .h, .cpp and .cpp.in under the
// given top folders of the source tree, as paths relative to its root ("models/net/Fabric.cpp").

#include <filesystem>
#include <string>
#include <vector>

namespace etsim::test {

inline std::vector<std::string> sourceFiles(const std::filesystem::path& root,
                                            const std::vector<std::string>& folders)
{
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const std::string& folder : folders) {
        if (!fs::exists(root / folder))
            continue;
        for (const auto& entry : fs::recursive_directory_iterator(root / folder)) {
            if (!entry.is_regular_file())
                continue;
            const std::string name = entry.path().filename().string();
            const bool source = entry.path().extension() == ".h" ||
                                entry.path().extension() == ".cpp" ||
                                (name.size() > 7 && name.substr(name.size() - 7) == ".cpp.in");
            if (source)
                files.push_back(fs::relative(entry.path(), root).generic_string());
        }
    }
    return files;
}

} // namespace etsim::test
