#include "models/hbm/AddressMap.h"

namespace etsim::hbm {

bool DeviceAddress::operator==(const DeviceAddress& other) const
{
    return stack == other.stack && channel == other.channel && pc == other.pc && sid == other.sid &&
           bankGroup == other.bankGroup && bank == other.bank && row == other.row &&
           column == other.column && byte == other.byte;
}

AddressMap::AddressMap(const HbmConfig& config)
    : bits(config.addressMap)
    , organisation(config.organisation)
    , stackBytes(config.organisation.stackBytes())
    , deviceBytes(config.organisation.deviceBytes())
    , interleave(config.organisation.stackInterleave.bytes())
{
    for (std::size_t f = 0; f < addressFieldCount; ++f) {
        const auto& fieldBits = bits.bits[f];
        for (std::size_t i = 0; i < fieldBits.size();) {
            std::size_t j = i + 1;
            while (j < fieldBits.size() && fieldBits[j] == fieldBits[j - 1] + 1)
                ++j;
            runs[f].push_back(
                Run{fieldBits[i], static_cast<std::uint8_t>(i), (std::uint64_t{1} << (j - i)) - 1});
            i = j;
        }
    }
}

std::uint32_t AddressMap::extract(AddressField field, std::uint64_t local) const
{
    std::uint64_t value = 0;
    for (const Run& run : runs[static_cast<std::size_t>(field)])
        value |= ((local >> run.from) & run.mask) << run.to;
    return static_cast<std::uint32_t>(value);
}

std::uint64_t AddressMap::deposit(AddressField field, std::uint32_t value) const
{
    std::uint64_t local = 0;
    const auto& fieldBits = bits.field(field);
    for (std::size_t i = 0; i < fieldBits.size(); ++i)
        local |= static_cast<std::uint64_t>((value >> i) & 1U) << fieldBits[i];
    return local;
}

DeviceAddress AddressMap::decode(std::uint64_t address) const
{
    DeviceAddress where;
    std::uint64_t local;
    if (organisation.stacks == 1) {
        // One stack whose capacity is a power of two needs no division.
        local = (stackBytes & (stackBytes - 1)) == 0 ? address & (stackBytes - 1)
                                                     : address % stackBytes;
    } else {
        address %= deviceBytes;
        std::uint64_t block = address / interleave;
        local = (block / organisation.stacks) * interleave + address % interleave;
        where.stack = static_cast<std::uint32_t>(block % organisation.stacks);
    }
    where.byte = extract(AddressField::Byte, local);
    where.column = extract(AddressField::Column, local);
    where.channel = extract(AddressField::Channel, local);
    where.pc = extract(AddressField::PseudoChannel, local);
    where.bankGroup = extract(AddressField::BankGroup, local);
    where.bank = extract(AddressField::Bank, local);
    where.sid = extract(AddressField::Sid, local);
    where.row = extract(AddressField::Row, local);
    return where;
}

std::uint64_t AddressMap::encode(const DeviceAddress& where) const
{
    std::uint64_t local =
        deposit(AddressField::Byte, where.byte) | deposit(AddressField::Column, where.column) |
        deposit(AddressField::Channel, where.channel) |
        deposit(AddressField::PseudoChannel, where.pc) |
        deposit(AddressField::BankGroup, where.bankGroup) |
        deposit(AddressField::Bank, where.bank) | deposit(AddressField::Sid, where.sid) |
        deposit(AddressField::Row, where.row);
    std::uint64_t block = (local / interleave) * organisation.stacks + where.stack;
    return block * interleave + local % interleave;
}

std::uint32_t AddressMap::pcIndex(const DeviceAddress& where) const
{
    return (where.stack * organisation.channelsPerStack + where.channel) *
               organisation.pcsPerChannel +
           where.pc;
}

std::uint32_t AddressMap::bankGroupIndex(const DeviceAddress& where) const
{
    return where.sid * organisation.bankGroups + where.bankGroup;
}

std::uint32_t AddressMap::bankIndex(const DeviceAddress& where) const
{
    return bankGroupIndex(where) * organisation.banksPerGroup + where.bank;
}

} // namespace etsim::hbm
