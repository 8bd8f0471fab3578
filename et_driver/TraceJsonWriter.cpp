// Writer of etsim's JSON form of a trace, pretty-printed, one node at a time (TraceJson.h).
#include "et_driver/TraceCodec.h"
#include "et_driver/TraceJson.h"
#include "et_driver/TraceJsonDetail.h"
#include "kernel/AtomicFile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>
#include <zlib.h>

namespace etsim::et {

namespace pb = ChakraProtoMsg;
namespace gp = google::protobuf;
using Json = nlohmann::ordered_json;
using jsondetail::messageToJson;

struct TraceJsonWriter::Sink {
    // The temporary file close() renames into place; destroyed first otherwise, it is
    // removed (kernel/AtomicFile.h).
    std::unique_ptr<AtomicFile> file;
    gzFile gz = nullptr; // on a duplicate of file's descriptor
    ~Sink()
    {
        if (gz != nullptr)
            gzclose(gz);
    }
};

TraceJsonWriter::TraceJsonWriter(std::filesystem::path path,
                                 const TraceMetadata& metadata,
                                 TraceJsonWriterOptions options)
    : file(std::move(path)), sink(std::make_unique<Sink>())
{
    bool gzip = options.compression == TraceCompression::Gzip ||
                (options.compression == TraceCompression::ByName && file.extension() == ".gz");
    std::string mode = gzip ? "wb" + std::to_string(std::clamp(options.gzipLevel, 1, 9)) : "wbT";
    try {
        sink->file = std::make_unique<AtomicFile>(file);
    } catch (const OutputError& error) {
        throw TraceError(file.string(), error.problem());
    }
    errno = 0;
    const int descriptor = ::dup(sink->file->fd());
    sink->gz = descriptor < 0 ? nullptr : gzdopen(descriptor, mode.c_str());
    if (sink->gz == nullptr) {
        if (descriptor >= 0)
            ::close(descriptor);
        throw TraceError(file.string(),
                         std::string("cannot create: ") +
                             (errno != 0 ? std::strerror(errno) : "out of memory"));
    }
    gzbuffer(sink->gz, 1 << 18);
    std::string head = "{\n  \"format\": \"" + std::string(traceJsonFormat) + "\",\n";
    try {
        head += "  \"metadata\": " + prettyJson(metadataToJson(metadata), 2) + ",\n";
    } catch (const Json::type_error& error) {
        throw TraceError(file.string(),
                         std::string("metadata: a string is not valid UTF-8 (") + error.what() +
                             "); JSON and Chakra strings must be UTF-8");
    }
    head += "  \"nodes\": [";
    put(head);
}

TraceJsonWriter::~TraceJsonWriter() = default;

void TraceJsonWriter::put(const std::string& text)
{
    if (!sink || sink->gz == nullptr)
        throw TraceError(file.string(), "write after close()");
    if (!text.empty() && gzwrite(sink->gz, text.data(), static_cast<unsigned>(text.size())) !=
                             static_cast<int>(text.size())) {
        int code = Z_OK;
        std::string message = gzerror(sink->gz, &code);
        if (code == Z_ERRNO)
            message = std::strerror(errno);
        sink.reset(); // removes the partial file
        throw TraceError(file.string(),
                         "write failed: " + message + "; the partial file was removed");
    }
}

void TraceJsonWriter::write(const TraceNode& node)
{
    TraceCodec::encode(node, scratch);
    std::string text = nodes == 0 ? "\n    " : ",\n    ";
    try {
        text += prettyJson(messageToJson(scratch), 4);
    } catch (const Json::type_error& error) {
        throw TraceError(file.string(),
                         "node " + std::to_string(nodes) + " (id " + std::to_string(node.id) +
                             "): a string is not valid UTF-8 (" + error.what() +
                             "); JSON and Chakra strings must be UTF-8");
    }
    put(text);
    ++nodes;
}

void TraceJsonWriter::close()
{
    if (!sink)
        return;
    put(nodes == 0 ? "]\n}\n" : "\n  ]\n}\n");
    std::unique_ptr<Sink> closing = std::move(sink);
    gzFile gz = closing->gz;
    closing->gz = nullptr;
    int status = gzclose(gz);
    if (status != Z_OK)
        throw TraceError(file.string(),
                         std::string("write failed when closing: ") +
                             (status == Z_ERRNO ? std::strerror(errno)
                                                : "zlib error " + std::to_string(status)) +
                             "; the partial file was removed");
    try {
        closing->file->commit();
    } catch (const OutputError& error) {
        throw TraceError(file.string(), error.problem());
    }
}

} // namespace etsim::et
