#include "kernel/Utf8.h"

namespace etsim {

std::size_t utf8SequenceLength(std::string_view text, std::size_t at)
{
    auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    unsigned char lead = byte(at);
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0)
            low = 0xA0;
        if (lead == 0xED)
            high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0)
            low = 0x90;
        if (lead == 0xF4)
            high = 0x8F;
    } else {
        return 0;
    }
    if (at + length > text.size())
        return 0;
    if (byte(at + 1) < low || byte(at + 1) > high)
        return 0;
    for (std::size_t i = 2; i < length; ++i)
        if ((byte(at + i) & 0xC0U) != 0x80U)
            return 0;
    return length;
}

std::optional<std::size_t> firstNonTextByte(std::string_view text)
{
    std::size_t at = 0;
    while (at < text.size()) {
        auto c = static_cast<unsigned char>(text[at]);
        if (c == 0)
            return at;
        if (c < 0x80) {
            ++at;
            continue;
        }
        std::size_t length = utf8SequenceLength(text, at);
        if (length == 0)
            return at;
        at += length;
    }
    return std::nullopt;
}

} // namespace etsim
