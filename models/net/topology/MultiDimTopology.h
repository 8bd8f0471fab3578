#pragma once
// A multi-dimensional topology as ASTRA-sim's analytical backend builds it: one building
// block per dimension (ring, unidirectional ring, fully connected, switch), ranks numbered
// r = x0 + n0 * (x1 + n1 * (x2 + ...)) with dimension 0 fastest. Every "line" of a dimension
// (the ranks that differ only in that coordinate) gets its own block: a 2D torus is
// ring x ring, a 3D torus ring x ring x ring, an HGX pod switch(8) x switch(nodes).
//
// Routing is dimension-ordered (dimension 0 first), minimal inside each block: a ring takes
// the shorter direction (clockwise on a tie), a unidirectional ring always goes forward, a
// fully connected block uses the direct link, a switch block goes up and down through its
// switch device.

#include "models/net/NetConfig.h"
#include "models/net/topology/TopologyIf.h"

#include <vector>

namespace etsim::net {

class MultiDimTopology final : public TopologyIf {
public:
    /// Builds the links of every dimension; throws etsim::Error for an empty list, a size
    /// below 2 or a zero bandwidth.
    explicit MultiDimTopology(std::vector<DimConfig> dims);

    std::string name() const override;
    std::uint32_t endpointCount() const override { return endpoints; }
    std::uint32_t deviceCount() const override { return devices; }
    const IdVector<LinkId, Link>& links() const override { return linkList; }
    void route(std::uint32_t src, std::uint32_t dst, std::vector<LinkId>& route) const override;
    std::uint32_t diameter() const override;

    /// Coordinate of `rank` in dimension `dim`.
    std::uint32_t coordinate(std::uint32_t rank, std::uint32_t dim) const;
    /// Distance between consecutive coordinates of dimension `dim` in rank numbers.
    std::uint32_t stride(std::uint32_t dim) const { return strides[dim]; }
    const std::vector<DimConfig>& dimensions() const { return dims; }

private:
    // Per dimension, the first link id of its block of links and how links are laid out.
    struct DimLayout {
        std::uint32_t firstLink = 0;
        std::uint32_t linksPerLine = 0;
        std::uint32_t firstSwitch = 0;
    };

    std::uint32_t lineIndex(std::uint32_t rank, std::uint32_t dim) const;
    void routeInDim(std::uint32_t dim,
                    std::uint32_t line,
                    std::uint32_t from,
                    std::uint32_t to,
                    std::vector<LinkId>& route) const;
    std::uint32_t hopsInDim(std::uint32_t dim, std::uint32_t from, std::uint32_t to) const;

    std::vector<DimConfig> dims;
    std::vector<std::uint32_t> strides;
    std::vector<DimLayout> layouts;
    std::uint32_t endpoints = 1;
    std::uint32_t devices = 0;
    IdVector<LinkId, Link> linkList;
};

} // namespace etsim::net
