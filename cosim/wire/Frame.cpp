#include "cosim/wire/Frame.h"

#include "cosim/wire/Bytes.h"

#include <algorithm>
#include <cstdio>

namespace etsim::cosim {

static_assert(headerSize == 4 + 1 + 1 + 1 + 1 + 4 + 4 + 8 + 8, "header layout is 32 bytes");

const char* toString(MessageType type)
{
    switch (type) {
    case MessageType::Hello:
        return "HELLO";
    case MessageType::Config:
        return "CONFIG";
    case MessageType::Request:
        return "REQUEST";
    case MessageType::Response:
        return "RESPONSE";
    case MessageType::Grant:
        return "GRANT";
    case MessageType::Terminate:
        return "TERMINATE";
    case MessageType::Error:
        return "ERROR";
    }
    return "?";
}

namespace {

// Stores `value` little-endian in `count` bytes at `out`; returns the byte after them.
std::uint8_t* storeLittle(std::uint8_t* out, std::uint64_t value, int count)
{
    for (int index = 0; index < count; ++index)
        *out++ = static_cast<std::uint8_t>(value >> (8 * index));
    return out;
}

} // namespace

// Written in place: a header is encoded for every frame, so no buffer is allocated for it.
void encodeHeader(const FrameHeader& header, std::uint8_t* out)
{
    out = storeLittle(out, frameMagic, 4);
    *out++ = header.major;
    *out++ = header.minor;
    *out++ = static_cast<std::uint8_t>(header.type);
    *out++ = header.flags;
    out = storeLittle(out, header.channel, 4);
    out = storeLittle(out, header.payloadLength, 4);
    out = storeLittle(out, header.requestId, 8);
    storeLittle(out, header.timestampPs, 8);
}

void appendFrame(const Frame& frame, std::vector<std::uint8_t>& out)
{
    if (frame.payload.size() > 0xFFFFFFFFu)
        throw CosimError("cosim: payload of " + std::to_string(frame.payload.size()) +
                         " bytes does not fit a frame");
    FrameHeader header = frame.header;
    header.payloadLength = static_cast<std::uint32_t>(frame.payload.size());
    const std::size_t start = out.size();
    out.reserve(start + headerSize + frame.payload.size());
    out.resize(start + headerSize);
    encodeHeader(header, out.data() + start);
    out.insert(out.end(), frame.payload.begin(), frame.payload.end());
}

std::vector<std::uint8_t> encodeFrame(const Frame& frame)
{
    std::vector<std::uint8_t> out;
    out.reserve(headerSize + frame.payload.size());
    appendFrame(frame, out);
    return out;
}

FrameHeader decodeHeader(const std::uint8_t* in, const Limits& limits, const std::string& where)
{
    ByteReader reader(in, headerSize, "frame header");
    const std::uint32_t magic = reader.u32("magic");
    if (magic != frameMagic) {
        char text[16];
        std::snprintf(text, sizeof text, "0x%08x", magic);
        throw CosimError(where + ": bad frame magic " + text +
                         " (expected 0x43535445 \"ETSC\"); the other side does not speak the "
                         "etsim co-simulation protocol or the stream lost its framing");
    }
    FrameHeader header;
    header.major = reader.u8("major");
    header.minor = reader.u8("minor");
    const std::uint8_t type = reader.u8("type");
    if (type < static_cast<std::uint8_t>(MessageType::Hello) ||
        type > static_cast<std::uint8_t>(MessageType::Error))
        throw CosimError(where + ": unknown message type " + std::to_string(type) +
                         " (known: 1 HELLO .. 7 ERROR)");
    header.type = static_cast<MessageType>(type);
    header.flags = reader.u8("flags");
    if ((header.flags & ~frameflags::known) != 0)
        throw CosimError(where + ": unknown flag bits " + std::to_string(header.flags) + " in " +
                         toString(header.type) + " frame");
    header.channel = reader.u32("channel");
    header.payloadLength = reader.u32("payload length");
    if (header.payloadLength > limits.maxPayload)
        throw CosimError(where + ": " + toString(header.type) + " frame announces a payload of " +
                         std::to_string(header.payloadLength) + " bytes, more than the limit of " +
                         std::to_string(limits.maxPayload));
    header.requestId = reader.u64("request id");
    header.timestampPs = reader.u64("timestamp");
    return header;
}

Frame decodeFrame(const std::uint8_t* data,
                  std::size_t size,
                  const Limits& limits,
                  const std::string& where)
{
    if (size < headerSize)
        throw CosimError(where + ": truncated frame: " + std::to_string(size) +
                         " byte(s), a header needs " + std::to_string(headerSize));
    Frame frame;
    frame.header = decodeHeader(data, limits, where);
    const std::size_t expected = headerSize + frame.header.payloadLength;
    if (size < expected)
        throw CosimError(where + ": truncated " + std::string(toString(frame.header.type)) +
                         " frame: payload length " + std::to_string(frame.header.payloadLength) +
                         " but only " + std::to_string(size - headerSize) + " byte(s) follow");
    if (size > expected)
        throw CosimError(where + ": " + std::to_string(size - expected) +
                         " trailing byte(s) after a " + toString(frame.header.type) + " frame");
    frame.payload.assign(data + headerSize, data + expected);
    return frame;
}

} // namespace etsim::cosim
