#pragma once
// A gzip-decompressing ZeroCopyInputStream that, unlike a plain "no more data", tells a clean
// end of the last gzip member from a stream cut short or corrupt (protobuf's GzipInputStream
// reports a truncated stream as an ordinary end, which would silently drop trailing records).
// Concatenated gzip members are read as one stream, as gzip(1) does.

#include <google/protobuf/io/zero_copy_stream.h>

#include <cstdint>
#include <string>
#include <vector>
#include <zlib.h>

namespace etsim::et {

class InflateInputStream : public google::protobuf::io::ZeroCopyInputStream {
public:
    // `source` delivers the compressed bytes and must outlive this stream. `bufferBytes` is the
    // size of the decompressed window handed out by Next().
    InflateInputStream(google::protobuf::io::ZeroCopyInputStream* source, std::size_t bufferBytes);
    ~InflateInputStream() override;
    InflateInputStream(const InflateInputStream&) = delete;
    InflateInputStream& operator=(const InflateInputStream&) = delete;

    bool Next(const void** data, int* size) override;
    void BackUp(int count) override;
    bool Skip(int count) override;
    int64_t ByteCount() const override;

    // Empty while the stream is healthy or ended cleanly; otherwise why Next() returned false.
    const std::string& error() const { return failure; }

private:
    google::protobuf::io::ZeroCopyInputStream* source;
    z_stream zs{};
    std::vector<unsigned char> output;
    // Bytes of the last chunk handed back with BackUp(), served again by the next Next().
    int backedUp = 0;
    int lastChunk = 0;
    int64_t delivered = 0;
    bool sourceEnded = false;
    bool inMember = false;
    std::string failure;
};

} // namespace etsim::et
