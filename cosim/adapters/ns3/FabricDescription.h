#pragma once
// The fabric a host hands to a network adapter in CONFIG (docs/cosim-ns3.md, "The fabric
// description"), parsed without ns-3: devices (endpoints first, then switches), directed links
// with bandwidth and latency, and the routes between endpoints, computed by etsim's own
// topology code (models/net/topology): listed pair by pair (format 1), or rebuilt here from the
// topology's routing shape (format 2), so the text stays small for thousands of ranks.

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace etsim::net {
class TopologyIf;
}

namespace etsim::cosim::ns3adapter {

struct DescribedLink {
    std::uint32_t from = 0;
    std::uint32_t to = 0;
    /// Usable bandwidth of this direction, B/s.
    double bytesPerSecond = 0.0;
    std::uint64_t latencyPs = 0;
};

struct FabricDescription {
    std::uint32_t endpoints = 0;
    /// Endpoints plus switches.
    std::uint32_t devices = 0;
    std::vector<DescribedLink> links;
    /// Routes listed pair by pair. Key: src << 32 | dst; the link indices in order.
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> routes;
    /// Format 2: the topology rebuilt from its routing shape; it routes every pair not listed.
    std::shared_ptr<const net::TopologyIf> routing;

    static std::uint64_t key(std::uint32_t src, std::uint32_t dst)
    {
        return std::uint64_t{src} << 32 | dst;
    }
    /// Replaces `hops` with the route from `src` to `dst` (link indices in order); false when
    /// the description has none (src == dst, or an endpoint out of range).
    bool route(std::uint32_t src, std::uint32_t dst, std::vector<std::uint32_t>& hops) const;
    /// Smallest summed link latency of any route, ps: no message arrives sooner.
    std::uint64_t minRouteLatencyPs() const;
};

/// Parses the CONFIG text (format 1 or 2). Throws CosimError naming the line and what is
/// wrong: an unknown keyword or version, a missing or malformed field, a link or route naming
/// a device or link out of range, a route whose links do not chain from src to dst, a missing
/// route; in format 2 a routing shape etsim's topology code refuses or whose devices and links
/// differ from the described ones.
FabricDescription parseFabricDescription(const std::string& text);

} // namespace etsim::cosim::ns3adapter
