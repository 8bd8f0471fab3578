#pragma once
// UTF-8 checks shared by the writers that must emit valid UTF-8 (the timeline) and the readers
// that must refuse what is not text (configuration files).

#include <cstddef>
#include <optional>
#include <string_view>

namespace etsim {

/// Length of the valid UTF-8 sequence of two to four bytes starting at text[at], or 0 if it is
/// not valid (an ASCII byte, a stray continuation byte, truncated, overlong, surrogate or
/// beyond U+10FFFF).
std::size_t utf8SequenceLength(std::string_view text, std::size_t at);

/// Offset of the first byte that keeps `text` from being UTF-8 text: a NUL byte or a byte of no
/// valid UTF-8 sequence; nullopt when there is none.
std::optional<std::size_t> firstNonTextByte(std::string_view text);

} // namespace etsim
