#pragma once
// Where a run's wall time went (`etsim run --profile`): the host time spent in each part of
// the platform (trace driver, accelerator, HBM, fabric, co-simulation bridge) and how often
// each was entered. A model marks its entry points (SystemC processes and socket callbacks)
// with a WallScope; calls nest (the driver's process calls the accelerator's socket, which
// calls the HBM's), and each part is charged only the time it ran itself, not the time of the
// parts it called. What no scope covers (the SystemC scheduler, the report) is `other`.
//
// A model finds the run's profile through its StatGroup (StatGroup::wallProfile) when it is
// built; without --profile there is none and a WallScope costs one test of a null pointer.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace etsim {

enum class WallPart : std::uint8_t {
    Driver,
    Accelerator,
    Hbm,
    Fabric,
    /// The co-simulation bridge, its waits for the peer included.
    Cosim,
};
inline constexpr std::size_t wallPartCount = 5;

/// "driver", "accelerator", "hbm", "fabric", "cosim": the report's keys.
std::string_view wallPartName(WallPart part);

class WallProfile {
public:
    /// `clock` gives nanoseconds of a monotonic clock; the default is std::steady_clock.
    explicit WallProfile(std::function<std::uint64_t()> clock = {});

    /// Brackets the measured run: time before start and after stop is not counted.
    void start();
    void stop();

    void enter(WallPart part);
    /// Leaves the part entered last.
    void leave();

    struct Share {
        double seconds = 0.0;
        /// Times the part was entered from outside it (an event, a transaction or a callback)
        /// between start and stop; a part's calls into itself do not count again.
        std::uint64_t entries = 0;
    };
    Share share(WallPart part) const;
    /// Time between start and stop in no part.
    double otherSeconds() const { return seconds(other); }
    /// Time between start and stop.
    double totalSeconds() const;

private:
    // Charges the time since the last mark to the part on top of the stack.
    void mark();
    static double seconds(std::uint64_t ns) { return static_cast<double>(ns) * 1e-9; }

    std::function<std::uint64_t()> clock;
    std::array<std::uint64_t, wallPartCount> partNs{};
    std::array<std::uint64_t, wallPartCount> entries{};
    std::uint64_t other = 0;
    std::vector<WallPart> stack;
    std::uint64_t last = 0;
    std::uint64_t startedNs = 0;
    std::uint64_t stoppedNs = 0;
    bool running = false;
};

/// Marks a model's entry point for the time it is in scope; does nothing without a profile.
class WallScope {
public:
    WallScope(WallProfile* profile, WallPart part) : profile(profile)
    {
        if (profile != nullptr)
            profile->enter(part);
    }
    ~WallScope()
    {
        if (profile != nullptr)
            profile->leave();
    }
    WallScope(const WallScope&) = delete;
    WallScope& operator=(const WallScope&) = delete;

private:
    WallProfile* profile;
};

} // namespace etsim
