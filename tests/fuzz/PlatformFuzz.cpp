// libFuzzer target: a platform YAML and `--set` overrides end in a PlatformConfig or one
// etsim::Error, never a crash, a hang or another exception. The input is overrides, one per
// line, then a line "---", then the YAML; without "---" it is all YAML.

#include "kernel/Error.h"
#include "platforms/PlatformConfig.h"
#include "tests/fuzz/FuzzInput.h"

#include <systemc>

#include <string>
#include <vector>

// libsystemc.so references sc_main; the fuzzer never elaborates anything.
int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const auto [head, yaml] = etsim::fuzz::splitAt(data, size, "\n---\n");
    std::vector<etsim::platform::Override> overrides;
    try {
        std::size_t start = 0;
        while (start < head.size()) {
            std::size_t end = head.find('\n', start);
            if (end == std::string_view::npos)
                end = head.size();
            overrides.push_back(
                etsim::platform::parseOverride(std::string(head.substr(start, end - start))));
            start = end + 1;
        }
        etsim::platform::loadPlatformString(std::string(yaml), "fuzz.yaml", overrides);
    } catch (const etsim::Error&) {
    }
    return 0;
}
