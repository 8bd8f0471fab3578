#include "et_driver/TraceReader.h"

#include "et_driver/InflateInputStream.h"
#include "et_driver/TraceCodec.h"
#include "et_driver/WireVarint.h"
#include "kernel/InputFile.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace etsim::et {

namespace pb = ChakraProtoMsg;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;
using google::protobuf::io::FileInputStream;
using google::protobuf::io::ZeroCopyInputStream;

namespace {

constexpr const char* corruptAdvice =
    "the file is corrupt or not a Chakra ET; regenerate or re-copy it";

// A GlobalMetadata holds only fields 1 and 2, both length-delimited; anything else in record 0
// means the producer wrote no metadata and record 0 is already a Node (spec 3.2).
bool looksLikeNode(const std::string& bytes)
{
    CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                        static_cast<int>(bytes.size()));
    while (uint32_t tag = in.ReadTag()) {
        if (WireFormatLite::GetTagWireType(tag) != WireFormatLite::WIRETYPE_LENGTH_DELIMITED ||
            WireFormatLite::GetTagFieldNumber(tag) >= 3)
            return true;
        if (!WireFormatLite::SkipField(&in, tag))
            return false;
    }
    return false;
}

std::string describeErrno(int error)
{
    return std::strerror(error);
}

} // namespace

struct TraceReader::Stream {
    int fd = -1;
    std::unique_ptr<FileInputStream> fileStream;
    std::unique_ptr<InflateInputStream> inflateStream;
    ZeroCopyInputStream* input = nullptr;
    // Offset of the byte at input->ByteCount() == 0.
    uint64_t base = 0;

    ~Stream()
    {
        inflateStream.reset();
        fileStream.reset();
        if (fd >= 0)
            ::close(fd);
    }
};

std::optional<std::string> TraceMetadata::stringAttr(std::string_view name) const
{
    for (const pb::AttributeProto& attr : message.attr()) {
        if (attr.name() == name && attr.value_case() == pb::AttributeProto::kStringVal)
            return attr.string_val();
    }
    return std::nullopt;
}

TraceReader::TraceReader(std::filesystem::path path, TraceReaderOptions readerOptions)
    : file(std::move(path)), options(readerOptions), scratch(std::make_unique<pb::Node>())
{
    open(0);
    readFirstRecord();
}

TraceReader::~TraceReader() = default;
TraceReader::TraceReader(TraceReader&&) noexcept = default;
TraceReader& TraceReader::operator=(TraceReader&&) noexcept = default;

void TraceReader::open(uint64_t resumeOffset)
{
    auto opened = std::make_unique<Stream>();
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer; it is refused below.
    opened->fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (opened->fd < 0)
        throw TraceError(file.string(),
                         "cannot open: " + describeErrno(errno) +
                             " (check the path and the permissions)");
    struct stat info {};
    if (::fstat(opened->fd, &info) != 0)
        throw TraceError(file.string(), "cannot stat: " + describeErrno(errno));
    if (S_ISDIR(info.st_mode))
        throw TraceError(file.string(),
                         "is a folder, not a trace file (read folders and prefixes with TraceSet)");
    if (!S_ISREG(info.st_mode))
        throw TraceError(file.string(),
                         "is " + fileTypeText(std::filesystem::status(file).type()) +
                             ", not a trace file; give the rank's Chakra ET file");
    ::fcntl(opened->fd, F_SETFL, ::fcntl(opened->fd, F_GETFL) & ~O_NONBLOCK);
    fileBytes = static_cast<uint64_t>(info.st_size);

    unsigned char magic[2] = {0, 0};
    ssize_t got = ::pread(opened->fd, magic, sizeof magic, 0);
    gzip = got == 2 && magic[0] == 0x1F && magic[1] == 0x8B;
    startsLikeJson = got >= 1 && (magic[0] == '{' || magic[0] == '[');

    auto blockSize = static_cast<int>(std::min<std::size_t>(options.bufferBytes, 1U << 30));
    if (gzip) {
        opened->fileStream = std::make_unique<FileInputStream>(opened->fd, blockSize);
        opened->inflateStream =
            std::make_unique<InflateInputStream>(opened->fileStream.get(), options.bufferBytes);
        opened->input = opened->inflateStream.get();
        if (resumeOffset > 0 && !opened->input->Skip(static_cast<int>(resumeOffset)))
            throw TraceError(file.string(),
                             "cannot resume reading at uncompressed offset " +
                                 std::to_string(resumeOffset) + ": the file changed while read");
    } else {
        if (::lseek(opened->fd, static_cast<off_t>(resumeOffset), SEEK_SET) < 0)
            throw TraceError(file.string(), "cannot seek: " + describeErrno(errno));
        if (resumeOffset > 0)
            blockSize = static_cast<int>(std::min<std::size_t>(resumeBlock, blockSize));
        // No larger than what is left to read (and a page): a run opens a file per rank, and
        // 16,384 small rank files would otherwise hold 4 GiB of mostly empty 256 KiB buffers.
        const std::uint64_t left = fileBytes > resumeOffset ? fileBytes - resumeOffset : 0;
        blockSize = static_cast<int>(
            std::min<std::uint64_t>(blockSize, std::max<std::uint64_t>(left + 1, 4096)));
        opened->fileStream = std::make_unique<FileInputStream>(opened->fd, blockSize);
        opened->input = opened->fileStream.get();
        opened->base = resumeOffset;
    }
    stream = std::move(opened);
}

uint64_t TraceReader::position() const
{
    return stream->base + static_cast<uint64_t>(stream->input->ByteCount());
}

void TraceReader::fail(uint64_t offset, const std::string& problem) const
{
    if (record == 0 && startsLikeJson)
        throw TraceError(file.string(),
                         record,
                         offset,
                         gzip,
                         problem + " (the file starts like JSON; this reader takes the protobuf "
                                   "form of Chakra ET only)");
    throw TraceError(file.string(), record, offset, gzip, problem);
}

void TraceReader::checkInput(uint64_t offset)
{
    if (stream->inflateStream && !stream->inflateStream->error().empty())
        fail(offset,
             stream->inflateStream->error() + "; re-compress the original trace or re-copy it");
    if (stream->fileStream && stream->fileStream->GetErrno() != 0)
        fail(offset, "read error: " + describeErrno(stream->fileStream->GetErrno()));
}

bool TraceReader::readLength(CodedInputStream& coded, uint64_t offset, uint32_t& length)
{
    const void* data = nullptr;
    int size = 0;
    if (!coded.GetDirectBufferPointer(&data, &size)) {
        checkInput(offset);
        return false;
    }
    // Read all 64 bits: a 32-bit read would take a huge prefix modulo 2^32.
    uint64_t wide = 0;
    if (!coded.ReadVarint64(&wide)) {
        checkInput(offset);
        fail(offset,
             "the file ends inside the length prefix of this record, or the prefix is not a "
             "varint: the file is truncated or corrupt; regenerate or re-copy it");
    }
    // Record 0 is the GlobalMetadata, and a GlobalMetadata with no field set is encoded in
    // zero bytes (etsim's writer makes one from JSON without metadata). An empty node record
    // would be node 0 with no name and nothing to do: it is what a file of zeros reads as,
    // so it is refused as corruption.
    if (wide == 0 && record > 0)
        fail(offset,
             std::string("the length prefix is 0: an empty record is no Chakra message (a "
                         "file of zero bytes") +
                 (gzip ? " after decompression" : "") + " looks like this): " + corruptAdvice);
    if (wide > options.maxRecordBytes)
        fail(offset,
             "length prefix says " + std::to_string(wide) + " bytes, more than the " +
                 std::to_string(options.maxRecordBytes) +
                 "-byte limit per record: " + corruptAdvice +
                 " (raise TraceReaderOptions::maxRecordBytes only if records really are this "
                 "large)");
    length = static_cast<uint32_t>(wide);
    uint64_t bodyStart = offset + static_cast<uint64_t>(coded.CurrentPosition());
    if (!gzip && length > fileBytes - std::min(fileBytes, bodyStart))
        fail(offset,
             "length prefix says " + std::to_string(length) + " bytes but only " +
                 std::to_string(fileBytes - std::min(fileBytes, bodyStart)) +
                 " remain in the file: the file is truncated (or the prefix is corrupt); "
                 "regenerate or re-copy it");
    return true;
}

void TraceReader::checkBody(
    CodedInputStream& coded, bool parsed, uint64_t offset, uint32_t length, const char* what)
{
    if (!parsed) {
        checkInput(offset);
        if (coded.BytesUntilLimit() > 0 && !coded.Skip(coded.BytesUntilLimit())) {
            checkInput(offset);
            fail(offset,
                 "the file ends inside this " + std::to_string(length) +
                     "-byte record: the file is truncated; regenerate or re-copy it");
        }
        fail(offset,
             "the " + std::to_string(length) + " bytes are not a valid Chakra " + what +
                 " message: " + corruptAdvice);
    }
    if (!coded.ConsumedEntireMessage())
        fail(offset,
             std::string("the record is not a valid Chakra ") + what +
                 " message (stray end-group tag): " + corruptAdvice);
    if (coded.BytesUntilLimit() != 0) {
        checkInput(offset);
        fail(offset,
             "the file ends inside this " + std::to_string(length) +
                 "-byte record: the file is truncated; regenerate or re-copy it");
    }
}

void TraceReader::readFirstRecord()
{
    uint64_t offset = position();
    std::string bytes;
    {
        CodedInputStream coded(stream->input);
        uint32_t length = 0;
        if (!readLength(coded, offset, length))
            throw TraceError(file.string(),
                             std::string("the file is empty") +
                                 (gzip ? " after gzip decompression" : "") +
                                 ": it holds no record, not even the GlobalMetadata record 0 "
                                 "every Chakra ET starts with; the producer probably failed, "
                                 "regenerate it");
        // Read in slices so a lying prefix in a gzip file cannot make us reserve its size.
        uint32_t left = length;
        std::string slice;
        while (left > 0) {
            uint32_t step = std::min<uint32_t>(left, 1U << 16);
            if (!coded.ReadString(&slice, static_cast<int>(step))) {
                checkInput(offset);
                fail(offset,
                     "the file ends inside this " + std::to_string(length) +
                         "-byte record: the file is truncated; regenerate or re-copy it");
            }
            bytes += slice;
            left -= step;
        }
    }
    if (looksLikeNode(bytes)) {
        if (!scratch->ParseFromString(bytes))
            fail(offset,
                 "record 0 is neither a GlobalMetadata nor a Node message: " +
                     std::string(corruptAdvice));
        pending.emplace();
        TraceCodec::decode(*scratch, *pending);
        meta.present = false;
    } else {
        if (!meta.message.ParseFromString(bytes))
            fail(offset,
                 "record 0 is not a valid GlobalMetadata message: " + std::string(corruptAdvice));
        meta.present = true;
    }
    record = 1;
}

bool TraceReader::next(TraceNode& node)
{
    return nextRecord(&node, nullptr);
}

bool TraceReader::next(NodeView& view)
{
    return nextRecord(nullptr, &view);
}

bool TraceReader::scanRecord(std::string_view bytes, TraceNode* node, NodeView* view)
{
    return view != nullptr ? view->scan(bytes) : TraceCodec::decodeRecord(bytes, *node);
}

bool TraceReader::scanInPlace(TraceNode* node, NodeView* view)
{
    // Leaves the limit's message to the general path.
    if (nodes >= options.maxNodes)
        return false;
    const void* data = nullptr;
    int size = 0;
    if (!stream->input->Next(&data, &size))
        return false;
    const auto* begin = static_cast<const std::uint8_t*>(data);
    const std::uint8_t* end = begin + size;
    const std::uint8_t* body = begin;
    std::uint64_t length = 0;
    bool viewed = readVarint(body, end, length) && length > 0 && length <= options.maxRecordBytes &&
                  length <= static_cast<std::uint64_t>(end - body) &&
                  scanRecord(std::string_view(reinterpret_cast<const char*>(body),
                                              static_cast<std::size_t>(length)),
                             node,
                             view);
    // The bytes stay where they are until the next read, so the view may point into them.
    stream->input->BackUp(viewed ? static_cast<int>(end - (body + length)) : size);
    return viewed;
}

bool TraceReader::nextRecord(TraceNode* node, NodeView* view)
{
    if (pending) {
        if (node) {
            *node = std::move(*pending);
        } else {
            // Record 0 of a file without metadata, decoded already; rare.
            TraceCodec::encode(*pending, *scratch);
            view->assign(*scratch);
        }
        pending.reset();
        ++nodes;
        return true;
    }
    if (ended)
        return false;
    if (!stream)
        open(resumeAt);
    if (scanInPlace(node, view)) {
        ++record;
        ++nodes;
        return true;
    }
    uint64_t offset = position();
    bool scanned = false;
    {
        CodedInputStream coded(stream->input);
        uint32_t length = 0;
        if (!readLength(coded, offset, length)) {
            ended = true;
            stream.reset();
            return false;
        }
        if (nodes >= options.maxNodes)
            fail(offset,
                 "more than " + std::to_string(options.maxNodes) +
                     " nodes in one rank file, etsim's limit (TraceReaderOptions::maxNodes); "
                     "a file this large is probably corrupt or a decompression bomb, otherwise "
                     "split the rank or raise the limit");
        CodedInputStream::Limit limit = coded.PushLimit(static_cast<int>(length));
        // When the record lies in the current buffer (nearly always), keep its bytes so the
        // codec copies the preserved parts instead of serializing them again, or a view can
        // read them in place.
        const void* direct = nullptr;
        int available = 0;
        wire.clear();
        if (coded.GetDirectBufferPointer(&direct, &available) &&
            available == static_cast<int>(length))
            wire.assign(static_cast<const char*>(direct), length);
        if (!wire.empty() && scanRecord(wire, node, view)) {
            coded.Skip(static_cast<int>(length));
            scanned = true;
        } else {
            bool parsed = scratch->ParseFromCodedStream(&coded);
            checkBody(coded, parsed, offset, length, "Node");
            if (view)
                view->assign(*scratch);
        }
        coded.PopLimit(limit);
    }
    if (node && !scanned)
        TraceCodec::decode(*scratch, wire, *node);
    ++record;
    ++nodes;
    return true;
}

std::size_t TraceReader::nextBatch(std::vector<TraceNode>& batch)
{
    std::size_t window = std::max<std::size_t>(options.windowNodes, 1);
    if (batch.size() > window)
        batch.resize(window);
    std::size_t filled = 0;
    while (filled < window) {
        if (filled == batch.size())
            batch.emplace_back();
        if (!next(batch[filled]))
            break;
        ++filled;
    }
    batch.resize(filled);
    return filled;
}

void TraceReader::suspend()
{
    if (!stream)
        return;
    resumeAt = position();
    // A reader suspended after little reading is likely to be suspended as soon again (a
    // set of more ranks than open files, read round robin): refilling the whole buffer at
    // each resumption would copy bufferBytes for a few records. So a plain file resumes with
    // a buffer of about twice what the last opening consumed, between 4 KiB and bufferBytes.
    uint64_t consumed = resumeAt - stream->base;
    resumeBlock = static_cast<std::size_t>(
        std::min<uint64_t>(std::max<uint64_t>(2 * consumed, minResumeBlock), options.bufferBytes));
    stream.reset();
}

} // namespace etsim::et
