// libFuzzer target: ASTRA-sim's network YAML, system JSON and remote-memory JSON loaders end
// in a config or one etsim::Error, never a crash, a hang or another exception. The first
// byte chooses the loader (mod 3), the rest is the file.

#include "kernel/Error.h"
#include "platforms/astra/AstraConfig.h"
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
    if (size == 0)
        return 0;
    namespace astra = etsim::platforms::astra;
    etsim::fuzz::MemoryFile file(data + 1, size - 1);
    if (!file.ok())
        return 0;
    std::vector<std::string> warnings;
    try {
        switch (data[0] % 3) {
        case 0: {
            const astra::NetworkConfig network = astra::loadNetworkConfig(file.path(), warnings);
            (void)network;
            break;
        }
        case 1: {
            const astra::SystemConfig system = astra::loadSystemConfig(file.path(), warnings);
            (void)system;
            break;
        }
        default: {
            const astra::MemoryConfig memory = astra::loadMemoryConfig(file.path(), warnings);
            (void)memory;
            break;
        }
        }
    } catch (const etsim::Error&) {
    }
    return 0;
}
