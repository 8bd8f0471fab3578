#pragma once
// Writes the fabric description a host sends to a network adapter in CONFIG (docs/cosim-ns3.md,
// "The fabric description"; parseFabricDescription reads it). Built from the fabric's links and
// routes (models/net/topology) only, without SystemC: any peer may write or check one.

#include <string>

namespace etsim::net {
class FabricLinks;
struct NetConfig;
} // namespace etsim::net

namespace etsim::cosim::ns3adapter {

/// The description of the fabric `config` configures, whose links and routes are `links`:
/// endpoints, devices, every link (including NIC links) with its bandwidth and latency, and the
/// routes: the topology's routing shape (format 2), or, when a route crosses NIC or self links,
/// the route of every ordered pair of endpoints (format 1).
std::string describeFabric(const net::FabricLinks& links, const net::NetConfig& config);

} // namespace etsim::cosim::ns3adapter
