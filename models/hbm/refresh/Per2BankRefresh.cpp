#include "models/hbm/refresh/Per2BankRefresh.h"

namespace etsim::hbm {

namespace {

// Pairs (0, n/2), (1, n/2 + 1), ...: with two stack IDs, the same bank of both.
std::vector<std::vector<std::uint32_t>> bankPairs(const Organisation& org)
{
    std::uint32_t half = org.banksPerPc() / 2;
    std::vector<std::vector<std::uint32_t>> sets;
    for (std::uint32_t bank = 0; bank < half; ++bank)
        sets.push_back({bank, bank + half});
    return sets;
}

} // namespace

Per2BankRefresh::Per2BankRefresh(const HbmConfig& config, std::uint32_t pcInChannel)
    : BankSetRefresh(config, pcInChannel, Command::Ref2b, bankPairs(config.organisation))
{
}

} // namespace etsim::hbm
