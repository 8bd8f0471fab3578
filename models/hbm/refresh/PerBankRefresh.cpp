#include "models/hbm/refresh/PerBankRefresh.h"

namespace etsim::hbm {

namespace {

std::vector<std::vector<std::uint32_t>> eachBank(const Organisation& org)
{
    std::vector<std::vector<std::uint32_t>> sets;
    for (std::uint32_t bank = 0; bank < org.banksPerPc(); ++bank)
        sets.push_back({bank});
    return sets;
}

} // namespace

PerBankRefresh::PerBankRefresh(const HbmConfig& config, std::uint32_t pcInChannel)
    : BankSetRefresh(config, pcInChannel, Command::RefPb, eachBank(config.organisation))
{
}

} // namespace etsim::hbm
