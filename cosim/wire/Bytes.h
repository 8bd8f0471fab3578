#pragma once
// Little-endian field writers and a bounds-checked reader for frame payloads. Every read
// checks the remaining length first, so a truncated or lying payload becomes a CosimError
// naming the field and offset, never an out-of-bounds access.

#include "cosim/wire/Frame.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace etsim::cosim {

namespace wire {
/// Little-endian u32 at `out` / from `in` (fixed-size records outside frames).
inline void putU32(std::uint8_t* out, std::uint32_t value)
{
    for (int index = 0; index < 4; ++index)
        out[index] = static_cast<std::uint8_t>(value >> (8 * index));
}
inline std::uint32_t getU32(const std::uint8_t* in)
{
    return std::uint32_t{in[0]} | std::uint32_t{in[1]} << 8 | std::uint32_t{in[2]} << 16 |
           std::uint32_t{in[3]} << 24;
}
} // namespace wire

class ByteWriter {
public:
    explicit ByteWriter(std::vector<std::uint8_t>& out) : out(out) {}

    void u8(std::uint8_t value) { out.push_back(value); }
    void u16(std::uint16_t value) { little(value, 2); }
    void u32(std::uint32_t value) { little(value, 4); }
    void u64(std::uint64_t value) { little(value, 8); }
    void f64(double value)
    {
        std::uint64_t bits = 0;
        std::memcpy(&bits, &value, sizeof bits);
        u64(bits);
    }
    void bytes(const std::uint8_t* data, std::size_t size)
    {
        out.insert(out.end(), data, data + size);
    }
    /// u16 length + bytes; throws CosimError when longer than 65,535 bytes.
    void shortString(const std::string& text, const char* field)
    {
        if (text.size() > 0xFFFF)
            throw CosimError(std::string("cosim: ") + field + " is " + std::to_string(text.size()) +
                             " bytes long; the wire allows at most 65535");
        u16(static_cast<std::uint16_t>(text.size()));
        bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
    }
    std::size_t size() const { return out.size(); }
    /// Overwrites a u16 written earlier at `offset`.
    void patchU16(std::size_t offset, std::uint16_t value)
    {
        out[offset] = static_cast<std::uint8_t>(value);
        out[offset + 1] = static_cast<std::uint8_t>(value >> 8);
    }

private:
    void little(std::uint64_t value, int count)
    {
        for (int index = 0; index < count; ++index)
            out.push_back(static_cast<std::uint8_t>(value >> (8 * index)));
    }
    std::vector<std::uint8_t>& out;
};

class ByteReader {
public:
    /// `what` names the message in errors ("REQUEST payload"); a string literal (not copied:
    /// a reader is made for every frame, so it must not allocate).
    ByteReader(const std::uint8_t* data, std::size_t size, const char* what)
        : data(data), size(size), what(what)
    {
    }

    std::uint8_t u8(const char* field) { return static_cast<std::uint8_t>(little(1, field)); }
    std::uint16_t u16(const char* field) { return static_cast<std::uint16_t>(little(2, field)); }
    std::uint32_t u32(const char* field) { return static_cast<std::uint32_t>(little(4, field)); }
    std::uint64_t u64(const char* field) { return little(8, field); }
    double f64(const char* field)
    {
        std::uint64_t bits = u64(field);
        double value = 0;
        std::memcpy(&value, &bits, sizeof value);
        return value;
    }
    const std::uint8_t* bytes(std::size_t count, const char* field)
    {
        need(count, field);
        const std::uint8_t* at = data + offset;
        offset += count;
        return at;
    }
    std::string string(std::size_t count, const char* field)
    {
        const std::uint8_t* at = bytes(count, field);
        return std::string(reinterpret_cast<const char*>(at), count);
    }
    std::string shortString(const char* field) { return string(u16(field), field); }
    void skip(std::size_t count, const char* field) { bytes(count, field); }

    std::size_t position() const { return offset; }
    std::size_t remaining() const { return size - offset; }
    /// Throws unless every byte was consumed.
    void expectEnd() const
    {
        if (offset != size)
            throw CosimError(std::string("cosim: ") + what + " has " +
                             std::to_string(size - offset) +
                             " unexpected trailing byte(s) at offset " + std::to_string(offset));
    }
    [[noreturn]] void fail(const std::string& problem) const
    {
        throw CosimError(std::string("cosim: ") + what + " at offset " + std::to_string(offset) +
                         ": " + problem);
    }

private:
    // The check is inlined into every field read; the message is built out of line, so a
    // decode costs a compare per field.
    void need(std::size_t count, const char* field) const
    {
        if (count > size - offset) [[unlikely]]
            truncated(count, field);
    }
    [[noreturn]] __attribute__((noinline)) void truncated(std::size_t count,
                                                          const char* field) const
    {
        throw CosimError(std::string("cosim: ") + what + " is truncated: field '" + field +
                         "' needs " + std::to_string(count) + " byte(s) at offset " +
                         std::to_string(offset) + ", " + std::to_string(size - offset) + " left");
    }
    std::uint64_t little(int count, const char* field)
    {
        need(static_cast<std::size_t>(count), field);
        std::uint64_t value = 0;
        for (int index = 0; index < count; ++index)
            value |= std::uint64_t{data[offset + static_cast<std::size_t>(index)]} << (8 * index);
        offset += static_cast<std::size_t>(count);
        return value;
    }

    const std::uint8_t* data;
    std::size_t size;
    std::size_t offset = 0;
    const char* what;
};

} // namespace etsim::cosim
