#pragma once
// Marks a compute transaction as one slice of a node: the accelerator streams a node whose
// bytes do not fit in SRAM in `count` chunks and sends the compute engine one transaction per
// chunk, each standing for 1/count of the node's work. Absent means the whole node.

#include <tlm>

#include <cstdint>

namespace etsim::accel {

class ComputeSliceExtension final : public tlm::tlm_extension<ComputeSliceExtension> {
public:
    ComputeSliceExtension() = default;
    ComputeSliceExtension(std::uint64_t index, std::uint64_t count) : index(index), count(count) {}

    tlm::tlm_extension_base* clone() const override
    {
        return new ComputeSliceExtension(index, count);
    }
    void copy_from(const tlm::tlm_extension_base& other) override
    {
        const auto& slice = static_cast<const ComputeSliceExtension&>(other);
        index = slice.index;
        count = slice.count;
    }

    /// Which slice, from 0.
    std::uint64_t index = 0;
    /// How many slices the node has (at least 1).
    std::uint64_t count = 1;
};

/// The share of `total` that slice `index` of `count` takes; the shares add up to `total`.
/// Every slice takes total / count, and the last one also the remainder (under `count` ps):
/// equal slices keep a stream's pipeline periodic from chunk to chunk.
inline std::uint64_t sliceShare(std::uint64_t total, std::uint64_t index, std::uint64_t count)
{
    const std::uint64_t share = total / count;
    return index + 1 == count ? share + total % count : share;
}

/// sliceShare(total, i, count) for i = 0, 1, 2, ... in turn.
class SliceShares {
public:
    SliceShares(std::uint64_t total, std::uint64_t count)
        : quotient(total / count), remainder(total % count), left(count)
    {
    }
    /// The share of the next slice.
    std::uint64_t next()
    {
        --left;
        return left == 0 ? quotient + remainder : quotient;
    }
    /// Steps over `slices` slices, none of them the last.
    void skip(std::uint64_t slices) { left -= slices; }

private:
    std::uint64_t quotient;
    std::uint64_t remainder;
    std::uint64_t left;
};

} // namespace etsim::accel
