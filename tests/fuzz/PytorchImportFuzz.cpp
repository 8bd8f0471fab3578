// libFuzzer target: any byte string given to the PyTorch importer's readers, as a host
// execution trace and as a Kineto trace, ends in data or one etsim::Error, never a crash, a
// hang or another exception. A host trace that reads is also mapped to a Chakra graph and its
// nodes built, to exercise the mapping on whatever the reader accepted.

#include "importers/pytorch/HostTrace.h"
#include "importers/pytorch/JsonFile.h"
#include "importers/pytorch/KinetoTrace.h"
#include "importers/pytorch/RankGraph.h"
#include "kernel/Error.h"

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
    namespace pt = etsim::importers::pytorch;
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        pt::HostTrace host = pt::parseHostTrace(text, "fuzz.json");
        pt::RankGraph graph(std::move(host), nullptr, 0, 2, pt::ImportOptions{});
        std::size_t nodes = 0;
        graph.emit([&](const ChakraProtoMsg::Node& /*node*/) { ++nodes; });
    } catch (const etsim::Error&) {
    }
    try {
        pt::KinetoTrace kineto =
            pt::parseKinetoTrace(pt::parseJsonText(text, "fuzz.json"), "fuzz.json");
        (void)kineto;
    } catch (const etsim::Error&) {
    }
    return 0;
}
