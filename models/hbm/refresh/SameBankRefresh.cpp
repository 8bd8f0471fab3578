#include "models/hbm/refresh/SameBankRefresh.h"

namespace etsim::hbm {

namespace {

// Set k: bank k of each bank group of every stack ID.
std::vector<std::vector<std::uint32_t>> sameBanks(const Organisation& org)
{
    std::vector<std::vector<std::uint32_t>> sets(org.banksPerGroup);
    for (std::uint32_t group = 0; group < org.bankGroupsPerPc(); ++group)
        for (std::uint32_t k = 0; k < org.banksPerGroup; ++k)
            sets[k].push_back(group * org.banksPerGroup + k);
    return sets;
}

} // namespace

SameBankRefresh::SameBankRefresh(const HbmConfig& config, std::uint32_t pcInChannel)
    // DRAMSys's same-bank refresh manager closes the set with one PRESB when any of its banks
    // is open (RefreshManagerSameBank.cpp), where the per-bank ones send a PREPB per bank.
    : BankSetRefresh(
          config, pcInChannel, Command::RefSb, sameBanks(config.organisation), Command::PreSb)
{
}

} // namespace etsim::hbm
