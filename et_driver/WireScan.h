#pragma once
// Reading a Node record's protobuf wire bytes in place, for the two decoders that skip
// protobuf's parser when they can (NodeView::scan, TraceCodec::decodeRecord). Everything here
// gives up (returns false) at anything it does not take for certain to be valid: a string
// beyond ASCII (protobuf checks UTF-8), a field the schema does not have, a group, a list other
// than bool_list. The caller then leaves the record to protobuf's parser, which accepts or
// refuses it as it always did.

#include "et_driver/NodeView.h"
#include "et_driver/WireVarint.h"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace etsim::et {

enum WireType : std::uint32_t { Varint = 0, Fixed64 = 1, Delimited = 2, Fixed32 = 5 };

class Wire {
public:
    Wire(const std::uint8_t* begin, const std::uint8_t* end) : p(begin), end(end) {}
    explicit Wire(std::string_view bytes)
        : Wire(reinterpret_cast<const std::uint8_t*>(bytes.data()),
               reinterpret_cast<const std::uint8_t*>(bytes.data()) + bytes.size())
    {
    }

    bool done() const { return p == end; }
    /// Where the next field starts.
    const std::uint8_t* at() const { return p; }

    bool varint(std::uint64_t& value) { return readVarint(p, end, value); }
    bool tag(std::uint32_t& field, std::uint32_t& type)
    {
        std::uint64_t value = 0;
        if (!varint(value) || value > 0xFFFFFFFFU)
            return false;
        field = static_cast<std::uint32_t>(value >> 3);
        type = static_cast<std::uint32_t>(value & 7);
        return field != 0;
    }
    bool delimited(Wire& body)
    {
        std::uint64_t size = 0;
        if (!varint(size) || size > static_cast<std::uint64_t>(end - p))
            return false;
        body = Wire(p, p + size);
        p += size;
        return true;
    }
    /// A length-delimited field of ASCII text (valid UTF-8, as protobuf requires of strings).
    bool ascii(std::string_view& text)
    {
        Wire body(p, p);
        if (!delimited(body))
            return false;
        // Eight bytes at a time: any high bit is a byte beyond ASCII.
        const std::uint8_t* at = body.p;
        for (; body.end - at >= 8; at += 8) {
            std::uint64_t word = 0;
            std::memcpy(&word, at, sizeof word);
            if (word & 0x8080808080808080ULL)
                return false;
        }
        for (; at < body.end; ++at)
            if (*at >= 0x80)
                return false;
        text = std::string_view(reinterpret_cast<const char*>(body.p),
                                static_cast<std::size_t>(body.end - body.p));
        return true;
    }
    bool fixed(std::size_t bytes, std::uint64_t& value)
    {
        if (static_cast<std::size_t>(end - p) < bytes)
            return false;
        value = 0;
        for (std::size_t at = 0; at < bytes; ++at)
            value |= static_cast<std::uint64_t>(p[at]) << (8 * at);
        p += bytes;
        return true;
    }
    /// Repeated uint64: one value, or a packed run of them.
    bool repeated(std::uint32_t type, std::vector<std::uint64_t>& out)
    {
        std::uint64_t value = 0;
        if (type == Varint) {
            if (!varint(value))
                return false;
            out.push_back(value);
            return true;
        }
        Wire packed(p, p);
        if (type != Delimited || !delimited(packed))
            return false;
        while (!packed.done()) {
            if (!packed.varint(value))
                return false;
            out.push_back(value);
        }
        return true;
    }

private:
    const std::uint8_t* p;
    const std::uint8_t* end;
};

/// A Node's varint fields as protobuf's parse stores them: id (1), type (3),
/// start_time_micros (6) and duration_micros (7); a field given twice keeps its last value.
struct NodeScalars {
    std::uint64_t id = 0;
    NodeType type = NodeType::Invalid;
    std::uint64_t startTimeMicros = 0;
    std::uint64_t durationMicros = 0;

    /// Whether `field` is one of them.
    static bool holds(std::uint32_t field)
    {
        return field == 1 || field == 3 || field == 6 || field == 7;
    }
    /// Reads field `field` (holds(field)) of wire type `type` into its member; false when it
    /// is no varint.
    bool read(Wire& wire, std::uint32_t field, std::uint32_t type);
};

/// One AttributeProto's bytes into `attr`; false for lists other than bool_list, unknown
/// fields and anything unexpected.
bool scanAttribute(Wire wire, AttributeView& attr);

/// Whether an IOInfo's bytes hold only its three strings, each ASCII.
bool scanIoInfo(Wire wire);

} // namespace etsim::et
