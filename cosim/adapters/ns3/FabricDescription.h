#pragma once
// The fabric a host hands to a network adapter in CONFIG (docs/cosim-ns3.md, "The fabric
// description"), parsed without SystemC or ns-3: devices (endpoints first, then switches),
// directed links with bandwidth and latency, and the route of every ordered pair of
// endpoints as computed by etsim's own topology code (models/net/flow/NetworkCore::describe).

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

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
    /// Key: src << 32 | dst; the link indices in order.
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> routes;

    static std::uint64_t key(std::uint32_t src, std::uint32_t dst)
    {
        return std::uint64_t{src} << 32 | dst;
    }
    /// The route from `src` to `dst`, or nullptr when the description has none.
    const std::vector<std::uint32_t>* route(std::uint32_t src, std::uint32_t dst) const;
    /// Smallest summed link latency of any route, ps: no message arrives sooner.
    std::uint64_t minRouteLatencyPs() const;
};

/// Parses the CONFIG text. Throws CosimError naming the line and what is wrong: an unknown
/// keyword or version, a missing or malformed field, a link or route naming a device or link
/// out of range, a route whose links do not chain from src to dst, a missing route.
FabricDescription parseFabricDescription(const std::string& text);

} // namespace etsim::cosim::ns3adapter
