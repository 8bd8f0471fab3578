#pragma once
// A two-tier leaf/spine fat tree (folded Clos): every endpoint has one link each way to its
// leaf switch, every leaf one link each way to every spine. Non-blocking when
// spines * uplink bandwidth >= endpointsPerLeaf * host bandwidth.
//
// Routing: same leaf -> endpoint, leaf, endpoint (2 links); otherwise endpoint, leaf, spine,
// leaf, endpoint (4 links) with the spine chosen by (src + dst) % spines, a deterministic
// stand-in for ECMP hashing that spreads an all-to-all evenly. Rail-optimised placement puts
// endpoint r on leaf r % leaves (GPU i of every node on rail i).

#include "models/net/NetConfig.h"
#include "models/net/topology/TopologyIf.h"

namespace etsim::net {

class FatTreeTopology final : public TopologyIf {
public:
    /// Throws etsim::Error for fewer than 2 endpoints, a leaf size that does not divide the
    /// endpoint count, no spines or a zero bandwidth.
    explicit FatTreeTopology(const FatTreeConfig& config);

    std::string name() const override;
    std::uint32_t endpointCount() const override { return config.endpoints; }
    std::uint32_t deviceCount() const override
    {
        return config.endpoints + config.leaves() + config.spines;
    }
    const IdVector<LinkId, Link>& links() const override { return linkList; }
    void route(std::uint32_t src, std::uint32_t dst, std::vector<LinkId>& route) const override;
    std::uint32_t diameter() const override { return config.leaves() > 1 ? 4 : 2; }

    /// The leaf switch (0-based among leaves) endpoint `rank` hangs off.
    std::uint32_t leafOf(std::uint32_t rank) const;

private:
    FatTreeConfig config;
    IdVector<LinkId, Link> linkList;
};

} // namespace etsim::net
