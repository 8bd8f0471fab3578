// libFuzzer target: the STL / relative-STL request reader of `etsim mem` ends every input in
// requests or one etsim::Error, never a crash, a hang or another exception. The first byte
// chooses absolute or relative timing.

#include "kernel/Error.h"
#include "kernel/Units.h"
#include "models/hbm/MemTraffic.h"

#include <systemc>

#include <sstream>
#include <string>

// libsystemc.so references sc_main; the fuzzer never elaborates anything.
int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size == 0)
        return 0;
    using namespace etsim;
    std::istringstream in(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
    try {
        hbm::StlReader reader(in,
                              "fuzz.stl",
                              data[0] % 2 == 0 ? hbm::StlTiming::Absolute
                                               : hbm::StlTiming::Relative,
                              Frequency::parse("1 GHz"),
                              64);
        hbm::MemRequest request;
        while (reader.next(request)) {
        }
    } catch (const Error&) {
    }
    return 0;
}
