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
inline std::uint64_t sliceShare(std::uint64_t total, std::uint64_t index, std::uint64_t count)
{
    // total·i / count without overflowing: (q·count + r)·i / count = q·i + r·i / count,
    // and r·i stays small for the chunk counts the accelerator uses.
    const std::uint64_t q = total / count;
    const std::uint64_t r = total % count;
    auto upTo = [&](std::uint64_t i) { return q * i + r * i / count; };
    return upTo(index + 1) - upTo(index);
}

/// sliceShare(total, i, count) for i = 0, 1, 2, ... in turn, without a division per slice:
/// the remainder's share r·i / count is carried as r·i mod count, and slice i takes one more
/// picosecond exactly when that carry passes count.
class SliceShares {
public:
    SliceShares(std::uint64_t total, std::uint64_t count)
        : quotient(total / count), remainder(total % count), count(count)
    {
    }
    /// The share of the next slice.
    std::uint64_t next()
    {
        carry += remainder;
        if (carry >= count) {
            carry -= count;
            return quotient + 1;
        }
        return quotient;
    }

private:
    std::uint64_t quotient;
    std::uint64_t remainder;
    std::uint64_t count;
    std::uint64_t carry = 0;
};

} // namespace etsim::accel
