#pragma once
// A protobuf base-128 varint read from raw record bytes, for the decoders that scan a record
// in place (TraceCodec::decodeFromWire, NodeView::scan).

#include <cstdint>

namespace etsim::et {

/// Reads the varint at p, moving p past it: at most 10 bytes, not past end, the tenth carrying
/// only the 64th bit. False when malformed; the caller then leaves the record to protobuf.
inline bool readVarint(const std::uint8_t*& p, const std::uint8_t* end, std::uint64_t& value)
{
    // Most tags, lengths and values of a trace take one byte.
    if (p < end && *p < 0x80) {
        value = *p++;
        return true;
    }
    value = 0;
    for (unsigned shift = 0; shift < 64 && p < end; shift += 7) {
        const std::uint8_t byte = *p++;
        if (shift == 63 && byte > 1)
            return false;
        value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
        if ((byte & 0x80) == 0)
            return true;
    }
    return false;
}

} // namespace etsim::et
