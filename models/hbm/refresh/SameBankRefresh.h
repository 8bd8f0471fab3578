#pragma once
// Same-bank refresh (as DDR5 REFsb): bank k of every bank group together, every refi_sb
// (default tREFI / banks per group), for rfc_sb; the set's open rows close with one PRESB. For
// a device whose timing set defines rfc_sb; JEDEC HBM does not (HbmConfig refuses the mode
// there).

#include "models/hbm/refresh/BankSetRefresh.h"

namespace etsim::hbm {

class SameBankRefresh final : public BankSetRefresh {
public:
    SameBankRefresh(const HbmConfig& config, std::uint32_t pcInChannel);
    const char* name() const override { return "same_bank"; }
};

} // namespace etsim::hbm
