#include "models/net/topology/MultiDimTopology.h"

#include "kernel/Error.h"

#include <algorithm>
#include <string>

namespace etsim::net {

namespace {

// Link layout inside one line of a dimension of p members:
//   Ring:           2p links: i -> i+1 at 2i, i -> i-1 at 2i+1 (p = 2: one link each way)
//   UniRing:        p links: i -> i+1 at i
//   FullyConnected: p(p-1) links: i -> j at i(p-1) + (j < i ? j : j-1)
//   Switch:         2p links: up i -> switch at 2i, down switch -> i at 2i+1, and with a
//                   crossbar bandwidth one more, switch -> switch at 2p, that every route
//                   through the switch crosses (so its traffic shares that bandwidth)
std::uint32_t linksPerLine(const DimConfig& config)
{
    const std::uint32_t size = config.size;
    switch (config.kind) {
    case DimKind::Ring:
        return size == 2 ? 2 : 2 * size;
    case DimKind::UniRing:
        return size;
    case DimKind::FullyConnected:
        return size * (size - 1);
    case DimKind::Switch:
        return 2 * size + (config.switchBandwidth ? 1 : 0);
    }
    return 0;
}

} // namespace

MultiDimTopology::MultiDimTopology(std::vector<DimConfig> dimensions) : dims(std::move(dimensions))
{
    if (dims.empty())
        throw Error("MultiDimTopology: needs at least one dimension");
    std::uint64_t count = 1;
    for (std::size_t dim = 0; dim < dims.size(); ++dim) {
        if (dims[dim].size < 2)
            throw Error("MultiDimTopology: dimension " + std::to_string(dim) + " has size " +
                        std::to_string(dims[dim].size) + "; every dimension needs at least 2");
        if (dims[dim].effectiveBandwidth().bytesPerSecond() <= 0.0)
            throw Error("MultiDimTopology: dimension " + std::to_string(dim) +
                        " has zero bandwidth; give a bandwidth above 0 B/s");
        strides.push_back(static_cast<std::uint32_t>(count));
        count *= dims[dim].size;
        if (count > (1ULL << 31))
            throw Error("MultiDimTopology: more than 2^31 endpoints");
    }
    endpoints = static_cast<std::uint32_t>(count);
    devices = endpoints;

    for (std::uint32_t dim = 0; dim < dims.size(); ++dim) {
        const DimConfig& config = dims[dim];
        std::uint32_t size = config.size;
        DimLayout layout;
        layout.firstLink = static_cast<std::uint32_t>(linkList.size());
        layout.linksPerLine = linksPerLine(config);
        layout.firstSwitch = devices;
        std::uint32_t lines = endpoints / size;
        if (config.kind == DimKind::Switch)
            devices += lines;
        linkList.reserve(linkList.size() + static_cast<std::size_t>(lines) * layout.linksPerLine);
        Bandwidth bandwidth = config.effectiveBandwidth();
        for (std::uint32_t line = 0; line < lines; ++line) {
            // The rank with coordinate 0 in this dimension on this line.
            std::uint32_t low = line % strides[dim];
            std::uint32_t high = line / strides[dim];
            std::uint32_t base = low + high * strides[dim] * size;
            auto member = [&](std::uint32_t index) { return base + index * strides[dim]; };
            auto add = [&](std::uint32_t from, std::uint32_t to) {
                linkList.append(Link{from, to, bandwidth, config.latency, dim});
            };
            switch (config.kind) {
            case DimKind::Ring:
                if (size == 2) {
                    add(member(0), member(1));
                    add(member(1), member(0));
                } else {
                    for (std::uint32_t i = 0; i < size; ++i) {
                        add(member(i), member((i + 1) % size));
                        add(member(i), member((i + size - 1) % size));
                    }
                }
                break;
            case DimKind::UniRing:
                for (std::uint32_t i = 0; i < size; ++i)
                    add(member(i), member((i + 1) % size));
                break;
            case DimKind::FullyConnected:
                for (std::uint32_t i = 0; i < size; ++i)
                    for (std::uint32_t j = 0; j < size; ++j)
                        if (i != j)
                            add(member(i), member(j));
                break;
            case DimKind::Switch: {
                std::uint32_t device = layout.firstSwitch + line;
                for (std::uint32_t i = 0; i < size; ++i) {
                    add(member(i), device);
                    add(device, member(i));
                }
                if (config.switchBandwidth)
                    linkList.append(
                        Link{device, device, *config.switchBandwidth, Time::fromPs(0), dim});
                break;
            }
            }
        }
        layouts.push_back(layout);
    }
}

std::string MultiDimTopology::name() const
{
    std::string text;
    for (const DimConfig& dim : dims) {
        if (!text.empty())
            text += " x ";
        text +=
            std::string(enumName(dimKindNames, dim.kind)) + "(" + std::to_string(dim.size) + ")";
    }
    return text;
}

std::uint32_t MultiDimTopology::coordinate(std::uint32_t rank, std::uint32_t dim) const
{
    return (rank / strides[dim]) % dims[dim].size;
}

std::uint32_t MultiDimTopology::lineIndex(std::uint32_t rank, std::uint32_t dim) const
{
    std::uint32_t low = rank % strides[dim];
    std::uint32_t high = rank / (strides[dim] * dims[dim].size);
    return low + high * strides[dim];
}

void MultiDimTopology::routeInDim(std::uint32_t dim,
                                  std::uint32_t line,
                                  std::uint32_t from,
                                  std::uint32_t to,
                                  std::vector<LinkId>& route) const
{
    const DimLayout& layout = layouts[dim];
    std::uint32_t size = dims[dim].size;
    std::uint32_t first = layout.firstLink + line * layout.linksPerLine;
    auto push = [&](std::uint32_t offset) { route.push_back(static_cast<LinkId>(first + offset)); };
    switch (dims[dim].kind) {
    case DimKind::Ring: {
        if (size == 2) {
            push(from);
            break;
        }
        std::uint32_t forward = (to + size - from) % size;
        bool clockwise = forward <= size - forward;
        for (std::uint32_t at = from; at != to;) {
            if (clockwise) {
                push(2 * at);
                at = (at + 1) % size;
            } else {
                push(2 * at + 1);
                at = (at + size - 1) % size;
            }
        }
        break;
    }
    case DimKind::UniRing:
        for (std::uint32_t at = from; at != to; at = (at + 1) % size)
            push(at);
        break;
    case DimKind::FullyConnected:
        push(from * (size - 1) + (to < from ? to : to - 1));
        break;
    case DimKind::Switch:
        push(2 * from);
        if (dims[dim].switchBandwidth)
            push(2 * size);
        push(2 * to + 1);
        break;
    }
}

void MultiDimTopology::route(std::uint32_t src, std::uint32_t dst, std::vector<LinkId>& route) const
{
    if (src >= endpoints || dst >= endpoints)
        throw Error("MultiDimTopology::route: endpoint " + std::to_string(std::max(src, dst)) +
                    " out of range (the topology has " + std::to_string(endpoints) + " endpoints)");
    std::uint32_t at = src;
    for (std::uint32_t dim = 0; dim < dims.size(); ++dim) {
        std::uint32_t from = coordinate(at, dim);
        std::uint32_t to = coordinate(dst, dim);
        if (from == to)
            continue;
        routeInDim(dim, lineIndex(at, dim), from, to, route);
        at = at - from * strides[dim] + to * strides[dim];
    }
}

std::uint32_t
MultiDimTopology::hopsInDim(std::uint32_t dim, std::uint32_t from, std::uint32_t to) const
{
    std::uint32_t size = dims[dim].size;
    std::uint32_t forward = (to + size - from) % size;
    switch (dims[dim].kind) {
    case DimKind::Ring:
        return std::min(forward, size - forward);
    case DimKind::UniRing:
        return forward;
    case DimKind::FullyConnected:
        return 1;
    case DimKind::Switch:
        return 2;
    }
    return 0;
}

std::uint32_t MultiDimTopology::diameter() const
{
    std::uint32_t total = 0;
    for (std::uint32_t dim = 0; dim < dims.size(); ++dim) {
        std::uint32_t longest = 0;
        for (std::uint32_t to = 1; to < dims[dim].size; ++to)
            longest = std::max(longest, hopsInDim(dim, 0, to));
        total += longest;
    }
    return total;
}

} // namespace etsim::net
