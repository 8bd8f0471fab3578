#pragma once
// Integer helpers shared by the timing models and the adapters. Header-only and free of
// SystemC, so the peer side (cosim/adapters) may include it.

#include <cstdint>

namespace etsim {

/// a / b rounded up; b must be > 0 (callers divide by configured, validated sizes).
constexpr std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b)
{
    return (a + b - 1) / b;
}

} // namespace etsim
