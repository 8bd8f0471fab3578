#pragma once
// Link busy tracks on a timeline: one track per link that carries data, one "busy" slice per
// busy interval with the wire bytes it carried. Intervals that overlap or touch are merged, so
// a slice spans many messages. Per link, intervals arrive in order of their start (every
// fidelity reports them so), so merging needs only the last one.

#include "kernel/Timeline.h"
#include "models/net/topology/FabricLinks.h"

#include <cstdint>
#include <vector>

namespace etsim::net {

class LinkTimeline {
public:
    explicit LinkTimeline(const FabricLinks& links) : fabricLinks(links) {}

    /// Writes on `timeline` (which must outlive this) under process `processId`.
    void attach(Timeline& timeline, std::uint32_t processId);
    bool attached() const { return timeline != nullptr; }
    /// Link `link` carried `bytes` from `startPs` to `endPs`. Inline so that a run without a
    /// timeline pays one test per link event.
    void busy(std::uint32_t link, std::uint64_t startPs, std::uint64_t endPs, double bytes)
    {
        if (timeline != nullptr)
            merge(link, startPs, endPs, bytes);
    }
    /// Writes the intervals still held for merging.
    void flush();

private:
    struct Span {
        std::uint64_t startPs = 0;
        std::uint64_t endPs = 0;
        double bytes = 0.0;
        bool open = false;
        bool named = false;
    };
    void merge(std::uint32_t link, std::uint64_t startPs, std::uint64_t endPs, double bytes);
    void write(std::uint32_t link);

    const FabricLinks& fabricLinks;
    std::vector<Span> spans;
    Timeline* timeline = nullptr;
    std::uint32_t process = 0;
};

} // namespace etsim::net
