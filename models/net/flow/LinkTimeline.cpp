#include "models/net/flow/LinkTimeline.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace etsim::net {

void LinkTimeline::attach(Timeline& target, std::uint32_t processId)
{
    timeline = &target;
    process = processId;
    spans.resize(fabricLinks.size());
}

void LinkTimeline::merge(std::uint32_t link,
                         std::uint64_t startPs,
                         std::uint64_t endPs,
                         double bytes)
{
    Span& span = spans[link];
    if (span.open && startPs <= span.endPs) {
        span.endPs = std::max(span.endPs, endPs);
        span.bytes += bytes;
        return;
    }
    if (span.open)
        write(link);
    span.open = true;
    span.startPs = startPs;
    span.endPs = endPs;
    span.bytes = bytes;
}

void LinkTimeline::write(std::uint32_t link)
{
    Span& span = spans[link];
    span.open = false;
    if (span.endPs == span.startPs)
        return;
    if (!span.named) {
        span.named = true;
        const std::size_t nicBase = fabricLinks.nicBase();
        const std::uint32_t endpoints = fabricLinks.endpointCount();
        const Link& spec = fabricLinks[link];
        std::string label;
        if (link < nicBase)
            label = "link " + std::to_string(link) + ": device " + std::to_string(spec.from) +
                    " -> " + std::to_string(spec.to);
        else if (link < nicBase + endpoints)
            label = "nic " + std::to_string(link) + ": injection of rank " +
                    std::to_string(link - nicBase);
        else
            label = "nic " + std::to_string(link) + ": ejection of rank " +
                    std::to_string(link - nicBase - endpoints);
        timeline->threadName(process, link, label, link);
    }
    timeline->complete(process,
                       link,
                       "busy",
                       "link",
                       span.startPs,
                       span.endPs - span.startPs,
                       {{"bytes", static_cast<std::uint64_t>(std::llround(span.bytes))}});
}

void LinkTimeline::flush()
{
    if (timeline == nullptr)
        return;
    for (std::uint32_t link = 0; link < spans.size(); ++link)
        if (spans[link].open)
            write(link);
}

} // namespace etsim::net
