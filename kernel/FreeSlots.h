#pragma once
// The reuse rule the models' flat tables share (the driver's flights, the HBM device's
// transactions, the fabric's tokens, collective instances, point-to-point sends, calendar
// buckets, eviction links, SlotTable): a freed index first, else a new default element at the
// end.
// Header-only, free of SystemC.

#include <cstdint>
#include <vector>

namespace etsim {

/// An index of `slots` for a new record: the last one pushed on `freed`, taken off it, or a
/// new default-constructed element appended. The element at a reused index is as it was left.
template <typename Index, typename Slots>
Index takeSlot(std::vector<Index>& freed, Slots& slots)
{
    if (!freed.empty()) {
        const Index index = freed.back();
        freed.pop_back();
        return index;
    }
    const auto index = static_cast<Index>(slots.size());
    slots.emplace_back();
    return index;
}

} // namespace etsim
