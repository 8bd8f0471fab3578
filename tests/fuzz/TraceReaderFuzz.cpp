// libFuzzer target: any byte string given to TraceReader ends in nodes or one TraceError,
// never a crash, a hang, a huge allocation or another exception. Each node read is also
// re-encoded, to exercise the codec on whatever the parser accepted. The file is then read
// again through the in-place decoder (NodeView), which must see the same nodes and refuse
// the file with the same error: a difference aborts, so libFuzzer keeps the input. The whole
// input is also decoded as one Node record by TraceCodec::decodeRecord, which the reader uses
// in place of protobuf's parser: where it accepts, protobuf must accept and decode the same.

#include "et_driver/TraceCodec.h"
#include "et_driver/TraceReader.h"
#include "tests/support/NodeViews.h"

#include <google/protobuf/stubs/logging.h>
#include <systemc>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

// libsystemc.so references sc_main; the fuzzer never elaborates anything.
int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

// As in the etsim command (apps/main.cpp): the reader reports every failed parse itself, and
// protobuf's own stderr line for each string that is not UTF-8 (about one input in ten) only
// costs a write per execution and fills the log.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/)
{
    google::protobuf::SetLogHandler(nullptr);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    // An in-memory file, so the reader runs its real open/read path without touching disk.
    int fd = memfd_create("etsim-fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return 0;
    std::size_t written = 0;
    while (written < size) {
        ssize_t n = ::write(fd, data + written, size - written);
        if (n <= 0) {
            ::close(fd);
            return 0;
        }
        written += static_cast<std::size_t>(n);
    }
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    etsim::et::TraceReaderOptions options;
    // Small buffers put record and varint boundaries across refills.
    options.bufferBytes = 64;
    options.maxRecordBytes = 1U << 20;
    // Each path's nodes, one line each, then "error: ..." when the file was refused.
    std::vector<std::string> parsed;
    try {
        etsim::et::TraceReader reader(path, options);
        etsim::et::TraceNode node;
        ChakraProtoMsg::Node message;
        while (reader.next(node)) {
            parsed.push_back(etsim::test::describe(node));
            etsim::et::TraceCodec::encode(node, message);
            std::string bytes = message.SerializeAsString();
            (void)bytes;
        }
    } catch (const etsim::et::TraceError& error) {
        parsed.push_back(std::string("error: ") + error.what());
    }
    std::vector<std::string> viewed;
    try {
        etsim::et::TraceReader reader(path, options);
        etsim::et::NodeView view;
        while (reader.next(view))
            viewed.push_back(etsim::test::describe(view));
    } catch (const etsim::et::TraceError& error) {
        viewed.push_back(std::string("error: ") + error.what());
    }
    ::close(fd);
    if (parsed != viewed) {
        std::fprintf(stderr,
                     "NodeView and TraceNode disagree: %zu and %zu lines; first TraceNode line: "
                     "%s\n",
                     viewed.size(),
                     parsed.size(),
                     parsed.empty() ? "(none)" : parsed.front().c_str());
        std::abort();
    }
    const std::string record(reinterpret_cast<const char*>(data), size);
    etsim::et::TraceNode inPlace;
    if (etsim::et::TraceCodec::decodeRecord(record, inPlace)) {
        ChakraProtoMsg::Node message;
        etsim::et::TraceNode fromParse;
        const bool accepted = message.ParseFromString(record);
        if (accepted)
            etsim::et::TraceCodec::decode(message, record, fromParse);
        if (!accepted || fromParse != inPlace) {
            std::fprintf(stderr, "decodeRecord and protobuf's parse disagree\n");
            std::abort();
        }
    }
    return 0;
}
