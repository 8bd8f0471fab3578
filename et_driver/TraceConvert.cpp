#include "et_driver/TraceConvert.h"

#include <cstring>
#include <zlib.h>

namespace etsim::et {

namespace {

bool endsWith(const std::string& text, const char* suffix)
{
    std::size_t n = std::strlen(suffix);
    return text.size() >= n && text.compare(text.size() - n, n, suffix) == 0;
}

// First bytes of the (decompressed) content.
std::string peekContent(const std::filesystem::path& file)
{
    gzFile gz = gzopen(file.c_str(), "rb");
    if (gz == nullptr)
        return {};
    char buffer[64];
    int got = gzread(gz, buffer, sizeof buffer);
    gzclose(gz);
    return got > 0 ? std::string(buffer, static_cast<std::size_t>(got)) : std::string();
}

bool looksLikeJson(const std::string& head)
{
    std::size_t i = head.find_first_not_of(" \t\r\n");
    if (i == std::string::npos || (head[i] != '{' && head[i] != '['))
        return false;
    // A protobuf record of 123 bytes also starts with '{'; its next byte is a field tag.
    std::size_t j = head.find_first_not_of(" \t\r\n", i + 1);
    return j == std::string::npos || std::strchr("\"{}[]", head[j]) != nullptr;
}

} // namespace

std::optional<TraceFileKind> traceFileKindByName(const std::filesystem::path& file)
{
    std::string name = file.filename().string();
    if (endsWith(name, ".et") || endsWith(name, ".et.gz"))
        return TraceFileKind::Et;
    if (endsWith(name, ".json") || endsWith(name, ".json.gz"))
        return TraceFileKind::Json;
    return std::nullopt;
}

AnyTraceReader::AnyTraceReader(const std::filesystem::path& file)
{
    std::optional<TraceFileKind> kind = traceFileKindByName(file);
    if (!kind) {
        std::error_code error;
        if (!std::filesystem::is_regular_file(file, error))
            throw TraceError(file.string(), "no such trace file (check the path)");
        kind = looksLikeJson(peekContent(file)) ? TraceFileKind::Json : TraceFileKind::Et;
    }
    if (*kind == TraceFileKind::Json)
        json.emplace(file);
    else
        et.emplace(file);
}

std::optional<JsonForm> AnyTraceReader::jsonForm() const
{
    if (json)
        return json->form();
    return std::nullopt;
}

const TraceMetadata& AnyTraceReader::metadata() const
{
    return json ? json->metadata() : et->metadata();
}

bool AnyTraceReader::next(TraceNode& node)
{
    return json ? json->next(node) : et->next(node);
}

ConvertResult convertTrace(const std::filesystem::path& in, const std::filesystem::path& out)
{
    std::optional<TraceFileKind> outKind = traceFileKindByName(out);
    if (!outKind)
        throw TraceError(out.string(),
                         "cannot tell the output format from the name: end it in .et, .et.gz, "
                         ".json or .json.gz");
    std::error_code error;
    if (std::filesystem::equivalent(in, out, error))
        throw TraceError(out.string(), "is the input file; write the output elsewhere");

    AnyTraceReader reader(in);
    ConvertResult result;
    result.inputKind = reader.kind();
    result.inputJsonForm = reader.jsonForm();
    result.metadataPresent = reader.metadata().present;
    TraceNode node;
    if (*outKind == TraceFileKind::Json) {
        TraceJsonWriter writer(out, reader.metadata());
        while (reader.next(node))
            writer.write(node);
        writer.close();
        result.nodes = writer.nodesWritten();
    } else {
        TraceWriterOptions options;
        options.metadataRecord = reader.metadata().present;
        TraceWriter writer(out, reader.metadata().message, options);
        while (reader.next(node))
            writer.write(node);
        writer.close();
        result.nodes = writer.nodesWritten();
    }
    return result;
}

} // namespace etsim::et
