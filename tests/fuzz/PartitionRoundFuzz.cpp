// libFuzzer target: the ROUND a process of a partitioned run sends the others
// (platforms/partition/PartitionSync.h). Any bytes decode to a round or end in one
// etsim::Error naming the sender; never a crash, a hang or an allocation the bytes cannot
// back. What decodes encodes to bytes that decode to the same round.

#include "kernel/Error.h"
#include "platforms/partition/PartitionSync.h"

#include <cstdlib>
#include <vector>

// libsystemc.so references sc_main; the fuzzer never elaborates anything.
int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    using namespace etsim;
    try {
        const platform::PartitionRound round =
            platform::decodeRound(std::vector<std::uint8_t>(data, data + size), 1);
        const std::vector<std::uint8_t> encoded = platform::encodeRound(round);
        if (platform::encodeRound(platform::decodeRound(encoded, 1)) != encoded)
            std::abort();
    } catch (const Error&) {
    }
    return 0;
}
