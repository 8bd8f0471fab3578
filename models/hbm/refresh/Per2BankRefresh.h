#pragma once
// Per-2-bank refresh (as GDDR6 REFp2b and LPDDR5 REFpb): banks b and b + banks / 2 together,
// every refi_p2b (default tREFI / (banks / 2)), for rfc_p2b. For a device whose timing set
// defines rfc_p2b; JEDEC HBM does not (HbmConfig refuses the mode there).

#include "models/hbm/refresh/BankSetRefresh.h"

namespace etsim::hbm {

class Per2BankRefresh final : public BankSetRefresh {
public:
    Per2BankRefresh(const HbmConfig& config, std::uint32_t pcInChannel);
    const char* name() const override { return "per_2bank"; }
};

} // namespace etsim::hbm
