#include "cosim/adapters/ns3/FabricDescription.h"

#include "cosim/wire/Frame.h"

#include <algorithm>
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

} // namespace

const std::vector<std::uint32_t>* FabricDescription::route(std::uint32_t src,
                                                           std::uint32_t dst) const
{
    const auto found = routes.find(key(src, dst));
    return found == routes.end() ? nullptr : &found->second;
}

std::uint64_t FabricDescription::minRouteLatencyPs() const
{
    std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
    for (const auto& [pair, hops] : routes) {
        std::uint64_t sum = 0;
        for (std::uint32_t link : hops)
            sum += links[link].latencyPs;
        best = std::min(best, sum);
    }
    return routes.empty() ? 0 : best;
}

FabricDescription parseFabricDescription(const std::string& text)
{
    FabricDescription fabric;
    std::istringstream lines(text);
    std::string raw;
    std::size_t number = 0;
    bool versioned = false;
    while (std::getline(lines, raw)) {
        ++number;
        const std::string content = raw.substr(0, raw.find('#'));
        std::istringstream in(content);
        std::string keyword;
        if (!(in >> keyword))
            continue;
        if (keyword == "etsim-fabric") {
            const auto version = field<std::uint32_t>(in, number, "the format version");
            if (version != 1)
                bad(number,
                    "format version " + std::to_string(version) +
                        " is not supported (this adapter reads version 1)");
            versioned = true;
        } else if (!versioned) {
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
    if (!versioned)
        throw CosimError("fabric description: empty; the host must send \"etsim-fabric 1\" "
                         "followed by endpoints, devices, links and routes");
    if (fabric.endpoints < 2)
        throw CosimError("fabric description: a fabric needs at least 2 endpoints");
    const std::size_t pairs = std::size_t{fabric.endpoints} * (std::size_t{fabric.endpoints} - 1);
    if (fabric.routes.size() != pairs)
        throw CosimError("fabric description: " + std::to_string(fabric.routes.size()) +
                         " routes for " + std::to_string(pairs) +
                         " ordered pairs of endpoints; every pair needs one");
    return fabric;
}

} // namespace etsim::cosim::ns3adapter
