#include "apps/TraceFormats.h"

#include "et_driver/TraceConvert.h"
#include "et_driver/TraceDot.h"
#include "et_driver/TraceJson.h"
#include "et_driver/TraceWriter.h"

#include <algorithm>

namespace etsim::apps {

namespace {

namespace fs = std::filesystem;

class EtSource : public NodeSource {
public:
    explicit EtSource(const fs::path& file) : reader(file) {}
    const et::TraceMetadata& metadata() const override { return reader.metadata(); }
    bool next(et::TraceNode& node) override { return reader.next(node); }

private:
    et::TraceReader reader;
};

class EtSink : public NodeSink {
public:
    // A legacy input without a metadata record gains the default one: Chakra's writer
    // checklist puts a GlobalMetadata record first, and current consumers expect it.
    EtSink(const fs::path& file, const et::TraceMetadata& metadata, bool gzip)
        : writer(file,
                 metadata.present ? metadata.message : et::TraceWriter::defaultMetadata(),
                 et::TraceWriterOptions{gzip ? et::TraceCompression::Gzip
                                             : et::TraceCompression::None})
    {
    }
    void write(const et::TraceNode& node) override { writer.write(node); }
    void close() override { writer.close(); }

private:
    et::TraceWriter writer;
};

class DotSink : public NodeSink {
public:
    explicit DotSink(const fs::path& file) : writer(file) {}
    void write(const et::TraceNode& node) override { writer.write(node); }
    void close() override { writer.close(); }

private:
    et::DotWriter writer;
};

// Reads etsim's JSON form and the two foreign JSON forms, plain or gzip.
class JsonSource : public NodeSource {
public:
    explicit JsonSource(const fs::path& file) : reader(file) {}
    const et::TraceMetadata& metadata() const override { return reader.metadata(); }
    bool next(et::TraceNode& node) override { return reader.next(node); }

private:
    et::AnyTraceReader reader;
};

// Writes etsim's lossless JSON form; an absent metadata record stays absent (null).
class JsonSink : public NodeSink {
public:
    JsonSink(const fs::path& file, const et::TraceMetadata& metadata)
        : writer(file, metadata, et::TraceJsonWriterOptions{et::TraceCompression::ByName, 6})
    {
    }
    void write(const et::TraceNode& node) override { writer.write(node); }
    void close() override { writer.close(); }

private:
    et::TraceJsonWriter writer;
};

std::unique_ptr<NodeSource> openJson(const fs::path& file)
{
    return std::make_unique<JsonSource>(file);
}

std::unique_ptr<NodeSink> createJson(const fs::path& file, const et::TraceMetadata& metadata)
{
    return std::make_unique<JsonSink>(file, metadata);
}

std::unique_ptr<NodeSource> openEt(const fs::path& file)
{
    // The reader detects gzip by its magic bytes, whatever the name says.
    return std::make_unique<EtSource>(file);
}

} // namespace

std::vector<TraceFormat> traceFormats()
{
    std::vector<TraceFormat> formats;
    formats.push_back({".et",
                       "Chakra ET, protobuf records (gzip input is detected and read too)",
                       openEt,
                       [](const fs::path& file, const et::TraceMetadata& metadata) {
                           return std::make_unique<EtSink>(file, metadata, false);
                       },
                       0,
                       ""});
    formats.push_back({".et.gz",
                       "Chakra ET, gzip-compressed",
                       openEt,
                       [](const fs::path& file, const et::TraceMetadata& metadata) {
                           return std::make_unique<EtSink>(file, metadata, true);
                       },
                       0,
                       ""});
    formats.push_back({".dot",
                       "Graphviz DOT of the dependency graph (write only)",
                       nullptr,
                       [](const fs::path& file, const et::TraceMetadata&) {
                           return std::make_unique<DotSink>(file);
                       },
                       100000,
                       "Graphviz layouts of more than 100000 nodes take hours"});

    formats.push_back({".json",
                       "JSON: etsim's lossless form (docs/trace-json.md); the legacy feeder's "
                       "and protobuf's JSON forms are read too",
                       openJson,
                       createJson,
                       0,
                       ""});
    formats.push_back({".json.gz", "JSON as above, gzip-compressed", openJson, createJson, 0, ""});
    return formats;
}

const TraceFormat* findFormat(const std::vector<TraceFormat>& formats, const fs::path& file)
{
    std::string name = file.filename().string();
    const TraceFormat* best = nullptr;
    for (const TraceFormat& format : formats) {
        const std::string& ext = format.extension;
        if (name.size() > ext.size() &&
            name.compare(name.size() - ext.size(), ext.size(), ext) == 0 &&
            (best == nullptr || ext.size() > best->extension.size()))
            best = &format;
    }
    return best;
}

std::string knownExtensions(const std::vector<TraceFormat>& formats, bool readable)
{
    std::string out;
    for (const TraceFormat& format : formats) {
        if (readable ? !format.openSource : !format.openSink)
            continue;
        out += (out.empty() ? "" : ", ") + format.extension;
    }
    return out;
}

} // namespace etsim::apps
