#include "et_driver/TraceWriter.h"

#include "et_driver/TraceCodec.h"
#include "kernel/AtomicFile.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <cerrno>
#include <cstring>
#include <exception>

namespace etsim::et {

namespace pb = ChakraProtoMsg;
using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::FileOutputStream;
using google::protobuf::io::GzipOutputStream;
using google::protobuf::io::ZeroCopyOutputStream;

struct TraceWriter::Stream {
    // The temporary file renamed over the target by close() (kernel/AtomicFile.h).
    std::unique_ptr<AtomicFile> file;
    std::unique_ptr<FileOutputStream> fileStream;
    std::unique_ptr<GzipOutputStream> gzipStream;
    ZeroCopyOutputStream* output = nullptr;
    // Exceptions in flight when the writer was made: more at destruction means unwinding.
    int exceptionsAtStart = std::uncaught_exceptions();

    // Flushes the streams; the errno of the first failure, 0 if none.
    int flush()
    {
        int error = 0;
        if (gzipStream && !gzipStream->Close())
            error = EIO;
        gzipStream.reset();
        if (fileStream) {
            if (!fileStream->Flush() && error == 0)
                error = fileStream->GetErrno() != 0 ? fileStream->GetErrno() : EIO;
            fileStream.reset();
        }
        return error;
    }
    // Flushes and renames the file into place; throws etsim::Error with the reason, after
    // removing the partial file.
    void commit()
    {
        if (int error = flush(); error != 0)
            file->fail("write", error);
        file->commit();
    }
};

pb::GlobalMetadata TraceWriter::defaultMetadata()
{
    pb::GlobalMetadata metadata;
    metadata.set_version("0.0.4");
    return metadata;
}

TraceWriter::TraceWriter(std::filesystem::path path,
                         const pb::GlobalMetadata& metadata,
                         TraceWriterOptions options)
    : file(std::move(path)), stream(std::make_unique<Stream>())
{
    try {
        stream->file = std::make_unique<AtomicFile>(file);
    } catch (const OutputError& error) {
        throw TraceError(file.string(), error.problem());
    }
    // The stream only flushes into the descriptor; the AtomicFile closes and renames it.
    stream->fileStream =
        std::make_unique<FileOutputStream>(stream->file->fd(), options.bufferBytes);
    bool gzip = options.compression == TraceCompression::Gzip ||
                (options.compression == TraceCompression::ByName && file.extension() == ".gz");
    if (gzip) {
        GzipOutputStream::Options gzipOptions;
        gzipOptions.format = GzipOutputStream::GZIP;
        gzipOptions.compression_level = options.gzipLevel;
        gzipOptions.buffer_size = options.bufferBytes;
        stream->gzipStream =
            std::make_unique<GzipOutputStream>(stream->fileStream.get(), gzipOptions);
        stream->output = stream->gzipStream.get();
    } else {
        stream->output = stream->fileStream.get();
    }
    if (!options.metadataRecord)
        return;
    // A GlobalMetadata with no field set would be a zero-length record, which Chakra's Python
    // tools take for the end of the file (spec 1.3): such metadata gets the default version.
    if (metadata.ByteSizeLong() == 0)
        writeRecord(defaultMetadata());
    else
        writeRecord(metadata);
}

TraceWriter::~TraceWriter()
{
    if (!stream)
        return;
    // Unwinding from an error: the file is incomplete, so it is not put in place.
    if (std::uncaught_exceptions() > stream->exceptionsAtStart)
        return;
    try {
        stream->commit();
    } catch (const Error&) { // NOLINT(bugprone-empty-catch): a destructor must not throw
    }
}

void TraceWriter::fail(const std::string& problem)
{
    stream.reset(); // removes the partial file
    throw TraceError(file.string(), problem);
}

void TraceWriter::writeRecord(const google::protobuf::MessageLite& message)
{
    if (!stream)
        throw TraceError(file.string(), "write after close()");
    std::size_t size = message.ByteSizeLong();
    if (size > INT32_MAX)
        fail("a record of " + std::to_string(size) + " bytes is too large for the format");
    CodedOutputStream coded(stream->output);
    coded.WriteVarint32(static_cast<uint32_t>(size));
    message.SerializeWithCachedSizes(&coded);
    if (coded.HadError())
        fail(std::string("write failed: ") + std::strerror(stream->fileStream->GetErrno() != 0
                                                               ? stream->fileStream->GetErrno()
                                                               : EIO));
}

void TraceWriter::write(const pb::Node& node)
{
    if (node.ByteSizeLong() == 0)
        throw TraceError(file.string(),
                         "node " + std::to_string(nodes) +
                             " after the metadata has only default fields (id 0, no name, "
                             "INVALID_NODE): it would be a zero-length record, which Chakra's "
                             "Python tools read as end of file; give it a name");
    writeRecord(node);
    ++nodes;
}

void TraceWriter::write(const TraceNode& node)
{
    TraceCodec::encode(node, scratch);
    write(scratch);
}

void TraceWriter::close()
{
    if (!stream)
        return;
    std::unique_ptr<Stream> closing = std::move(stream);
    try {
        closing->commit();
    } catch (const OutputError& error) {
        throw TraceError(file.string(), error.problem());
    }
}

} // namespace etsim::et
