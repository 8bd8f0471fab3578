#include "et_driver/InflateInputStream.h"

#include <algorithm>

namespace etsim::et {

namespace {
// windowBits for inflateInit2: 15-bit window, gzip header and trailer required.
constexpr int gzipWindowBits = 15 + 16;
} // namespace

InflateInputStream::InflateInputStream(google::protobuf::io::ZeroCopyInputStream* source,
                                       std::size_t bufferBytes)
    : source(source), output(std::max<std::size_t>(bufferBytes, 4096))
{
    if (inflateInit2(&zs, gzipWindowBits) != Z_OK)
        failure = "zlib could not be initialised (out of memory)";
}

InflateInputStream::~InflateInputStream()
{
    inflateEnd(&zs);
}

bool InflateInputStream::Next(const void** data, int* size)
{
    if (backedUp > 0) {
        *data = output.data() + (lastChunk - backedUp);
        *size = backedUp;
        delivered += backedUp;
        backedUp = 0;
        return true;
    }
    if (!failure.empty())
        return false;
    while (true) {
        if (zs.avail_in == 0 && !sourceEnded) {
            const void* in = nullptr;
            int inSize = 0;
            if (source->Next(&in, &inSize)) {
                zs.next_in = static_cast<Bytef*>(const_cast<void*>(in));
                zs.avail_in = static_cast<uInt>(inSize);
            } else {
                sourceEnded = true;
            }
        }
        if (zs.avail_in == 0 && sourceEnded) {
            if (inMember)
                failure = "the gzip stream is cut short (the file ends inside compressed data)";
            return false;
        }
        inMember = true;
        zs.next_out = output.data();
        zs.avail_out = static_cast<uInt>(output.size());
        int status = inflate(&zs, Z_NO_FLUSH);
        auto produced = static_cast<int>(output.size() - zs.avail_out);
        if (status == Z_STREAM_END) {
            inMember = false;
            inflateReset(&zs);
        } else if (status != Z_OK && status != Z_BUF_ERROR) {
            failure = std::string("the gzip data is corrupt (zlib: ") +
                      (zs.msg != nullptr ? zs.msg : "error " + std::to_string(status)) + ")";
            return false;
        }
        if (produced > 0) {
            *data = output.data();
            *size = produced;
            lastChunk = produced;
            delivered += produced;
            return true;
        }
    }
}

void InflateInputStream::BackUp(int count)
{
    backedUp = count;
    delivered -= count;
}

bool InflateInputStream::Skip(int count)
{
    while (count > 0) {
        const void* data = nullptr;
        int size = 0;
        if (!Next(&data, &size))
            return false;
        if (size > count) {
            BackUp(size - count);
            return true;
        }
        count -= size;
    }
    return true;
}

int64_t InflateInputStream::ByteCount() const
{
    return delivered;
}

} // namespace etsim::et
