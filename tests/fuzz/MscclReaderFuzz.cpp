// libFuzzer target: any byte string given to the MSCCL reader ends in a program or one
// etsim::Error, never a crash, a hang or another exception; a program it accepts then goes
// through the verifier, which must end the same way.

#include "kernel/Error.h"
#include "models/net/collectives/ProgramVerifier.h"
#include "platforms/collectives/MscclReader.h"

#include <systemc>

#include <cstddef>
#include <cstdint>
#include <string>

// libsystemc.so references sc_main; the fuzzer never elaborates anything.
int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        etsim::net::CollectiveProgram program = etsim::platform::parseMsccl(text, "fuzz.xml");
        // Bound the verifier's work: the fuzzer may write ngpus=65536 with few steps.
        if (program.rankCount() <= 256)
            etsim::net::verifyProgram(program);
    } catch (const etsim::Error&) {
    }
    return 0;
}
