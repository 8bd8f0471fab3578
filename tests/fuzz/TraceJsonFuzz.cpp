// libFuzzer target: any bytes given to the JSON trace reader (etsim's form and the two
// foreign forms, plain or gzip) end in nodes or one TraceError, never a crash, a hang, a
// huge allocation or another exception. Each node read is written back as JSON too.

#include "et_driver/TraceError.h"
#include "et_driver/TraceJson.h"
#include "tests/fuzz/FuzzInput.h"

#include <systemc>

// libsystemc.so references sc_main; the fuzzer never elaborates anything.
int sc_main(int /*argc*/, char** /*argv*/)
{
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    etsim::fuzz::MemoryFile file(data, size);
    if (!file.ok())
        return 0;
    try {
        etsim::et::TraceJsonReaderOptions options;
        // Small buffers put refills inside keys, strings, numbers and escapes.
        options.bufferBytes = 64;
        etsim::et::TraceJsonReader reader(file.path(), options);
        etsim::et::TraceNode node;
        while (reader.next(node)) {
            const std::string text = etsim::et::prettyJson(etsim::et::nodeToJson(node));
            (void)text;
        }
    } catch (const etsim::Error&) {
    } catch (const nlohmann::ordered_json::exception&) {
        // A string read from the trace that is not UTF-8 cannot be written as JSON: the
        // writer reports that as a TraceError; nodeToJson alone may throw this.
    }
    return 0;
}
