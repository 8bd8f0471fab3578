#pragma once
// The timeline of a partitioned run (docs/partitioned-runs.md, Timeline). Each process draws
// its own ranks: partition 0 into the timeline file itself, every other process into a part
// file of its own in the system's temporary folder. At the end the parts' events move to
// partition 0 over the transport, in chunks of whole events, so the processes need no shared
// file system and no process holds more than a chunk of another's events.

#include "kernel/Timeline.h"
#include "platforms/Job.h"
#include "platforms/partition/PartitionTransport.h"

#include <cstdint>
#include <filesystem>
#include <memory>

namespace etsim::platform {

class PartitionTimeline {
public:
    /// Opens this process's part of the timeline `spec` names (throws etsim::Error as
    /// Timeline does).
    PartitionTimeline(const TimelineSpec& spec, std::uint32_t self);
    /// Removes a part file that is left (a run that failed before gather()).
    ~PartitionTimeline();
    PartitionTimeline(const PartitionTimeline&) = delete;
    PartitionTimeline& operator=(const PartitionTimeline&) = delete;

    /// Where this process draws its ranks.
    Timeline& timeline() { return *own; }

    /// Closes this process's part and moves its events to partition 0, which then closes the
    /// whole timeline. Every process calls it at the same point of the run. At partition 0,
    /// the timeline's events and its file's size afterwards; zero elsewhere. Throws
    /// etsim::Error for a part that cannot be read, PartitionFailure as the transport does.
    struct Written {
        std::uint64_t events = 0;
        std::uint64_t bytes = 0;
    };
    Written gather(PartitionTransport& transport, std::uint64_t nowPs);

private:
    std::uint32_t self;
    std::filesystem::path partPath; // empty at partition 0
    std::unique_ptr<Timeline> own;
};

} // namespace etsim::platform
