#include "cosim/adapters/ns3/FabricDescription.h"

#include "cosim/wire/Frame.h"
#include "models/net/topology/TopologyFactory.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <sstream>

namespace etsim::cosim::ns3adapter {

namespace {

[[noreturn]] void bad(std::size_t line, const std::string& problem)
{
    throw CosimError("fabric description line " + std::to_string(line) + ": " + problem);
}

template <typename T>
T field(std::istringstream& in, std::size_t line, const char* what)
{
    T value{};
    if (!(in >> value))
        bad(line, std::string("expected ") + what);
    return value;
}

// The rebuilt topology must be the described one, or its routes would name other links.
void checkRouting(const FabricDescription& fabric, std::size_t line)
{
    const net::TopologyIf& topology = *fabric.routing;
    auto differ = [&](const std::string& what, std::size_t shape, std::size_t described) {
        bad(line,
            "the routing shape has " + std::to_string(shape) + " " + what +
                " but the description " + std::to_string(described) +
                "; the shape and the links must come from the same fabric");
    };
    if (topology.endpointCount() != fabric.endpoints)
        differ("endpoints", topology.endpointCount(), fabric.endpoints);
    if (topology.deviceCount() != fabric.devices)
        differ("devices", topology.deviceCount(), fabric.devices);
    const auto& shapeLinks = topology.links();
    if (shapeLinks.size() != fabric.links.size())
        differ("links", shapeLinks.size(), fabric.links.size());
    for (LinkId id : shapeLinks.ids()) {
        const net::Link& link = shapeLinks[id];
        const DescribedLink& described = fabric.links[toUnderlying(id)];
        if (link.from != described.from || link.to != described.to)
            bad(line,
                "link " + std::to_string(toUnderlying(id)) + " of the routing shape joins " +
                    std::to_string(link.from) + " -> " + std::to_string(link.to) +
                    " but the description's joins " + std::to_string(described.from) + " -> " +
                    std::to_string(described.to) +
                    "; the shape and the links must come from the same fabric");
    }
}

} // namespace

bool FabricDescription::route(std::uint32_t src,
                              std::uint32_t dst,
                              std::vector<std::uint32_t>& hops) const
{
    hops.clear();
    const auto found = routes.find(key(src, dst));
    if (found != routes.end()) {
        hops = found->second;
        return true;
    }
    if (!routing || src == dst || src >= endpoints || dst >= endpoints)
        return false;
    std::vector<LinkId> ids;
    routing->route(src, dst, ids);
    for (LinkId id : ids)
        hops.push_back(toUnderlying(id));
    return true;
}

std::uint64_t FabricDescription::minRouteLatencyPs() const
{
    std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
    auto consider = [&](const std::vector<std::uint32_t>& hops) {
        std::uint64_t sum = 0;
        for (std::uint32_t link : hops)
            sum += links[link].latencyPs;
        best = std::min(best, sum);
    };
    if (routing) {
        std::vector<std::uint32_t> hops;
        for (std::uint32_t src = 0; src < endpoints; ++src)
            for (std::uint32_t dst = 0; dst < endpoints; ++dst)
                if (route(src, dst, hops))
                    consider(hops);
    } else {
        for (const auto& [pair, hops] : routes)
            consider(hops);
    }
    return best == std::numeric_limits<std::uint64_t>::max() ? 0 : best;
}

FabricDescription parseFabricDescription(const std::string& text)
{
    FabricDescription fabric;
    std::istringstream lines(text);
    std::string raw;
    std::size_t number = 0;
    std::uint32_t format = 0;
    std::size_t routingLine = 0;
    while (std::getline(lines, raw)) {
        ++number;
        const std::string content = raw.substr(0, raw.find('#'));
        std::istringstream in(content);
        std::string keyword;
        if (!(in >> keyword))
            continue;
        if (keyword == "etsim-fabric") {
            const auto version = field<std::uint32_t>(in, number, "the format version");
            if (version != 1 && version != 2)
                bad(number,
                    "format version " + std::to_string(version) +
                        " is not supported (this adapter reads versions 1 and 2)");
            format = version;
        } else if (format == 0) {
            bad(number,
                "the description must start with \"etsim-fabric 1\"; is this the "
                "CONFIG of a fabric?");
        } else if (keyword == "endpoints") {
            fabric.endpoints = field<std::uint32_t>(in, number, "the endpoint count");
        } else if (keyword == "devices") {
            fabric.devices = field<std::uint32_t>(in, number, "the device count");
            if (fabric.devices < fabric.endpoints)
                bad(number, "fewer devices than endpoints");
        } else if (keyword == "link") {
            const auto index = field<std::uint32_t>(in, number, "the link index");
            if (index != fabric.links.size())
                bad(number,
                    "link " + std::to_string(index) + " out of order (expected " +
                        std::to_string(fabric.links.size()) + ")");
            DescribedLink link;
            link.from = field<std::uint32_t>(in, number, "the source device");
            link.to = field<std::uint32_t>(in, number, "the destination device");
            link.bytesPerSecond = field<double>(in, number, "the bandwidth in B/s");
            link.latencyPs = field<std::uint64_t>(in, number, "the latency in ps");
            if (link.from >= fabric.devices || link.to >= fabric.devices)
                bad(number,
                    "link " + std::to_string(index) + " joins device " +
                        std::to_string(std::max(link.from, link.to)) + " but there are " +
                        std::to_string(fabric.devices) + " devices");
            fabric.links.push_back(link);
        } else if (keyword == "routing") {
            if (format < 2)
                bad(number, "\"routing\" needs format 2 (\"etsim-fabric 2\")");
            if (routingLine != 0)
                bad(number,
                    "a second \"routing\" line (the first is line " + std::to_string(routingLine) +
                        ")");
            std::string shape;
            std::getline(in >> std::ws, shape);
            while (!shape.empty() && std::isspace(static_cast<unsigned char>(shape.back())))
                shape.pop_back();
            try {
                fabric.routing = net::makeRoutingTopology(shape);
            } catch (const CosimError&) {
                throw;
            } catch (const Error& error) {
                bad(number, error.what());
            }
            routingLine = number;
        } else if (keyword == "route") {
            const auto src = field<std::uint32_t>(in, number, "the source endpoint");
            const auto dst = field<std::uint32_t>(in, number, "the destination endpoint");
            if (src >= fabric.endpoints || dst >= fabric.endpoints || src == dst)
                bad(number,
                    "route " + std::to_string(src) + " -> " + std::to_string(dst) +
                        " does not join two different endpoints");
            std::vector<std::uint32_t> hops;
            std::uint32_t at = src;
            std::uint32_t link = 0;
            while (in >> link) {
                if (link >= fabric.links.size())
                    bad(number,
                        "route names link " + std::to_string(link) + " but there are " +
                            std::to_string(fabric.links.size()) + " links");
                if (fabric.links[link].from != at)
                    bad(number,
                        "route " + std::to_string(src) + " -> " + std::to_string(dst) + ": link " +
                            std::to_string(link) + " does not start at device " +
                            std::to_string(at));
                at = fabric.links[link].to;
                hops.push_back(link);
            }
            if (!in.eof())
                bad(number, "expected link indices");
            if (at != dst)
                bad(number,
                    "route " + std::to_string(src) + " -> " + std::to_string(dst) +
                        " ends at device " + std::to_string(at));
            fabric.routes[FabricDescription::key(src, dst)] = std::move(hops);
        } else {
            bad(number, "unknown keyword \"" + keyword + "\"");
        }
    }
    if (format == 0)
        throw CosimError("fabric description: empty; the host must send \"etsim-fabric 1\" "
                         "followed by endpoints, devices, links and routes");
    if (fabric.endpoints < 2)
        throw CosimError("fabric description: a fabric needs at least 2 endpoints");
    if (fabric.routing) {
        checkRouting(fabric, routingLine);
        return fabric;
    }
    const std::size_t pairs = std::size_t{fabric.endpoints} * (std::size_t{fabric.endpoints} - 1);
    if (fabric.routes.size() != pairs)
        throw CosimError("fabric description: " + std::to_string(fabric.routes.size()) +
                         " routes for " + std::to_string(pairs) +
                         " ordered pairs of endpoints; every pair needs one");
    return fabric;
}

} // namespace etsim::cosim::ns3adapter
