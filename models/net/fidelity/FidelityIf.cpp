#include "models/net/fidelity/FidelityIf.h"

#include "kernel/Error.h"
#include "models/net/fidelity/AnalyticalFidelity.h"
#include "models/net/fidelity/AstraAwareFidelity.h"
#include "models/net/fidelity/AstraUnawareFidelity.h"
#include "models/net/fidelity/FlowFidelity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace etsim::net {

namespace {

// 2^64 as a double: the first duration the simulated clock cannot hold.
constexpr double clockEndPs = 18446744073709551616.0;

} // namespace

std::unique_ptr<FidelityIf> makeFidelity(Fidelity kind, NetworkState& state)
{
    switch (kind) {
    case Fidelity::Analytical:
        return std::make_unique<AnalyticalFidelity>(state);
    case Fidelity::AstraAware:
        return std::make_unique<AstraAwareFidelity>(state);
    case Fidelity::AstraUnaware:
        return std::make_unique<AstraUnawareFidelity>(state);
    case Fidelity::Flow:
        break;
    }
    return std::make_unique<FlowFidelity>(state);
}

void requireWithinClock(double ps, const std::string& what)
{
    if (ps < clockEndPs)
        return;
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.3g", ps * 1e-12);
    throw Error(what + " would take " + seconds +
                " s, beyond the end of the simulated clock (2^64 ps, about 213 days); a size or "
                "a link bandwidth is far outside the range of real hardware: check comm_size "
                "and the fabric's bandwidths");
}

std::uint64_t roundPsWide(double ps)
{
    if (ps <= 0.0)
        return 0;
    // llround of a value past 2^63 is undefined; past 2^64 the time does not exist (NaN too).
    requireWithinClock(std::isnan(ps) ? clockEndPs : ps, "fabric: a transfer");
    // Doubles past 2^63 are whole numbers already; below, llround as before.
    if (ps >= 9223372036854775808.0)
        return static_cast<std::uint64_t>(ps);
    return static_cast<std::uint64_t>(std::llround(ps));
}

std::uint64_t reductionPsExact(std::uint64_t bytes, Bandwidth localMemory)
{
    return static_cast<std::uint64_t>(
        std::llround(3.0 * static_cast<double>(bytes) / (localMemory.bytesPerSecond() * 1e-12)));
}

std::uint64_t reductionPsWholeNs(std::uint64_t bytes, Bandwidth localMemory)
{
    // ASTRA-sim: 3 * floor(m / local_mem_bw) ns, the bandwidth in bytes per ns.
    return 3000 * static_cast<std::uint64_t>(std::floor(static_cast<double>(bytes) /
                                                        (localMemory.bytesPerSecond() / 1e9)));
}

std::uint64_t holdLinksPs(NetworkState& state, const Flow& flow, std::uint64_t now)
{
    // The slowest link's time is the largest of the links' times (division and rounding are
    // monotone), so it is taken from the same loop.
    std::uint64_t serialPs = 0;
    const double bytes = static_cast<double>(flow.bytes);
    for (std::uint32_t link : flow.route) {
        LinkState& target = state.links[link];
        std::uint64_t busy = roundPs(bytes / target.bytesPerPs);
        target.busyPs += busy;
        state.timeline.busy(link, now, now + busy, bytes);
        serialPs = std::max(serialPs, busy);
    }
    return serialPs;
}

} // namespace etsim::net
