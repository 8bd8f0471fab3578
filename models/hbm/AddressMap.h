#pragma once
// From a physical address to stack / channel / pseudo-channel / bank group / bank / row /
// column, and back. Addresses are first reduced modulo the device capacity; stacks take turns
// every `stack_interleave` bytes (stacks need not be a power of two: the H100 has five); inside
// a stack the configured bit fields apply. A stack's capacity need not be a power of two either
// (24 Gb dies give 24 and 36 GiB stacks): its row count is then partial and the row field holds
// the top address bits, so every address below the capacity decodes to an existing row.

#include "models/hbm/HbmConfig.h"

#include <array>
#include <cstdint>
#include <vector>

namespace etsim::hbm {

/// Where one burst lives.
struct DeviceAddress {
    std::uint32_t stack = 0;
    std::uint32_t channel = 0;
    std::uint32_t pc = 0; ///< within its channel
    std::uint32_t sid = 0;
    std::uint32_t bankGroup = 0; ///< within its SID
    std::uint32_t bank = 0;      ///< within its bank group
    std::uint32_t row = 0;
    std::uint32_t column = 0; ///< burst index within the page
    std::uint32_t byte = 0;   ///< offset within the burst

    bool operator==(const DeviceAddress& other) const;
};

class AddressMap {
public:
    /// `config` must be validated (see HbmConfig.h).
    explicit AddressMap(const HbmConfig& config);

    DeviceAddress decode(std::uint64_t address) const;
    /// The lowest address of `where` (inverse of decode for in-range fields).
    std::uint64_t encode(const DeviceAddress& where) const;

    /// Index of the PC over the whole device: (stack × channels + channel) × PCs + pc.
    std::uint32_t pcIndex(const DeviceAddress& where) const;
    /// Index of the bank within its PC: ((sid × bank groups) + bank group) × banks + bank.
    std::uint32_t bankIndex(const DeviceAddress& where) const;
    /// Bank group index within its PC over all SIDs: sid × bank groups + bank group.
    std::uint32_t bankGroupIndex(const DeviceAddress& where) const;

private:
    std::uint32_t extract(AddressField field, std::uint64_t local) const;
    std::uint64_t deposit(AddressField field, std::uint32_t value) const;

    // A field's bits as runs of consecutive address bits, so decoding shifts whole runs.
    struct Run {
        std::uint8_t from;  // lowest address bit of the run
        std::uint8_t to;    // where it lands in the field value
        std::uint64_t mask; // run width as a mask
    };

    AddressMapBits bits;
    std::array<std::vector<Run>, addressFieldCount> runs;
    Organisation organisation;
    std::uint64_t stackBytes;
    std::uint64_t deviceBytes;
    std::uint64_t interleave;
};

} // namespace etsim::hbm
