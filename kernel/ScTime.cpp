#include "kernel/ScTime.h"

#include <cmath>
#include <limits>

namespace etsim {

namespace {

__extension__ using Uint128 = unsigned __int128;

constexpr std::uint64_t maxUint64 = std::numeric_limits<std::uint64_t>::max();

// SystemC resolutions are powers of ten from 1 fs to 100 s.
std::uint64_t resolutionFs()
{
    return static_cast<std::uint64_t>(
        std::llround(sc_core::sc_get_time_resolution().to_seconds() * 1e15));
}

} // namespace

Time fromScTime(const sc_core::sc_time& time)
{
    const std::uint64_t fs = resolutionFs();
    Uint128 steps = time.value();
    if (fs >= 1000) {
        Uint128 ps = steps * (fs / 1000);
        if (ps > maxUint64)
            throw UnitError("sc_time " + time.to_string() + " exceeds the largest time, " +
                            toString(Time::fromPs(maxUint64)));
        return Time::fromPs(static_cast<std::uint64_t>(ps));
    }
    std::uint64_t perPs = 1000 / fs;
    return Time::fromPs(static_cast<std::uint64_t>((steps + perPs / 2) / perPs));
}

sc_core::sc_time toScTime(Time time)
{
    const std::uint64_t fs = resolutionFs();
    if (fs >= 1000) {
        Uint128 perStep = fs / 1000;
        return sc_core::sc_time::from_value(
            static_cast<std::uint64_t>((Uint128{time.ps()} + perStep / 2) / perStep));
    }
    Uint128 steps = Uint128{time.ps()} * (1000 / fs);
    if (steps > maxUint64)
        throw UnitError("time " + toString(time) +
                        " does not fit an sc_time at the kernel's time resolution of " +
                        sc_core::sc_get_time_resolution().to_string());
    return sc_core::sc_time::from_value(static_cast<std::uint64_t>(steps));
}

std::uint64_t toPicoseconds(const sc_core::sc_time& time)
{
    // sc_time counts in units of the kernel's resolution; scale by an integer factor so the
    // result is exact (to_seconds() would round through a double).
    double resolutionPs = sc_core::sc_get_time_resolution().to_seconds() * 1e12;
    if (resolutionPs >= 1.0)
        return time.value() * static_cast<std::uint64_t>(std::llround(resolutionPs));
    return time.value() / static_cast<std::uint64_t>(std::llround(1.0 / resolutionPs));
}

} // namespace etsim
