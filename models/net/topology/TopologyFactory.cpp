#include "models/net/topology/TopologyFactory.h"

#include "models/net/topology/FatTreeTopology.h"
#include "models/net/topology/MultiDimTopology.h"

#include <sstream>

namespace etsim::net {

std::unique_ptr<TopologyIf> makeTopology(const NetConfig& config)
{
    if (config.topologyKind == TopologyKind::FatTree)
        return std::make_unique<FatTreeTopology>(config.fatTree);
    return std::make_unique<MultiDimTopology>(config.dims);
}

std::string routingShape(const NetConfig& config)
{
    std::ostringstream shape;
    if (config.topologyKind == TopologyKind::FatTree) {
        const FatTreeConfig& tree = config.fatTree;
        shape << "fat_tree " << tree.endpoints << ' ' << tree.endpointsPerLeaf << ' ' << tree.spines
              << ' ' << (tree.railOptimised ? "rail" : "block");
        return shape.str();
    }
    shape << "multi_dim";
    for (const DimConfig& dim : config.dims)
        shape << ' ' << enumName(dimKindNames, dim.kind) << ':' << dim.size;
    return shape.str();
}

std::unique_ptr<TopologyIf> makeRoutingTopology(const std::string& shape)
{
    auto bad = [&shape](const std::string& problem) {
        return Error("routing shape \"" + shape + "\": " + problem);
    };
    auto count = [&bad](const std::string& word, const char* what) {
        if (word.empty() || word.size() > 9 || word.find_first_not_of("0123456789") != word.npos)
            throw bad(std::string("expected ") + what + " (a whole number), got \"" + word + "\"");
        return static_cast<std::uint32_t>(std::stoul(word));
    };
    // Routes do not depend on speeds; any valid ones will do.
    const Bandwidth speed = Bandwidth::fromBytesPerSecond(1e9);
    const Time latency = Time::fromPs(1000);
    std::istringstream in(shape);
    std::string kind;
    in >> kind;
    NetConfig config;
    if (kind == "fat_tree") {
        std::string endpoints, perLeaf, spines, placement, extra;
        in >> endpoints >> perLeaf >> spines >> placement;
        FatTreeConfig& tree = config.fatTree;
        config.topologyKind = TopologyKind::FatTree;
        tree.endpoints = count(endpoints, "the endpoint count");
        tree.endpointsPerLeaf = count(perLeaf, "the endpoints per leaf");
        tree.spines = count(spines, "the spine count");
        if (placement != "rail" && placement != "block")
            throw bad("expected rail or block, got \"" + placement + "\"");
        if (in >> extra)
            throw bad("unexpected \"" + extra + "\" at the end");
        tree.railOptimised = placement == "rail";
        tree.hostBandwidth = speed;
        tree.uplinkBandwidth = speed;
        tree.hostLatency = latency;
        tree.uplinkLatency = latency;
    } else if (kind == "multi_dim") {
        std::string dim;
        while (in >> dim) {
            const std::size_t colon = dim.find(':');
            if (colon == std::string::npos)
                throw bad("expected KIND:SIZE, got \"" + dim + "\"");
            DimConfig one;
            const std::string name = dim.substr(0, colon);
            bool known = false;
            for (const auto& entry : dimKindNames)
                if (entry.name == name) {
                    one.kind = entry.value;
                    known = true;
                }
            if (!known)
                throw bad("unknown dimension kind \"" + name +
                          "\" (known: ring, uni_ring, fully_connected, switch)");
            one.size = count(dim.substr(colon + 1), "the dimension size");
            one.bandwidth = speed;
            one.latency = latency;
            config.dims.push_back(one);
        }
    } else {
        throw bad("unknown topology kind \"" + kind + "\" (known: multi_dim, fat_tree)");
    }
    try {
        return makeTopology(config);
    } catch (const Error& error) {
        throw bad(error.what());
    }
}

} // namespace etsim::net
