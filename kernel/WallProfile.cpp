#include "kernel/WallProfile.h"

#include <chrono>

namespace etsim {

std::string_view wallPartName(WallPart part)
{
    switch (part) {
    case WallPart::Driver:
        return "driver";
    case WallPart::Accelerator:
        return "accelerator";
    case WallPart::Hbm:
        return "hbm";
    case WallPart::Fabric:
        return "fabric";
    case WallPart::Cosim:
        return "cosim";
    }
    return "?";
}

WallProfile::WallProfile(std::function<std::uint64_t()> clockNs) : clock(std::move(clockNs))
{
    if (!clock)
        clock = [] {
            return static_cast<std::uint64_t>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count());
        };
    // Nesting is shallow (driver -> accelerator -> HBM -> fabric): no growth in the run.
    stack.reserve(16);
}

void WallProfile::start()
{
    last = startedNs = clock();
    running = true;
}

void WallProfile::stop()
{
    if (!running)
        return;
    mark();
    stoppedNs = last;
    running = false;
}

double WallProfile::totalSeconds() const
{
    return seconds((running ? clock() : stoppedNs) - startedNs);
}

void WallProfile::mark()
{
    const std::uint64_t now = clock();
    if (running) {
        const std::uint64_t spent = now - last;
        if (stack.empty())
            other += spent;
        else
            partNs[static_cast<std::size_t>(stack.back())] += spent;
    }
    last = now;
}

void WallProfile::enter(WallPart part)
{
    mark();
    // A part calling into itself (the accelerator's process into its own engine socket) is
    // still the one entry; only the measured run counts.
    if (running && (stack.empty() || stack.back() != part))
        ++entries[static_cast<std::size_t>(part)];
    stack.push_back(part);
}

void WallProfile::leave()
{
    if (stack.empty())
        return;
    mark();
    stack.pop_back();
}

WallProfile::Share WallProfile::share(WallPart part) const
{
    const auto index = static_cast<std::size_t>(part);
    return {seconds(partNs[index]), entries[index]};
}

} // namespace etsim
