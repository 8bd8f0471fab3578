#pragma once
// Per-bank refresh (HBM REFpb): one bank at a time, every refi_pb (default tREFI / banks),
// for tRFCpb while the other banks keep serving; the bank is chosen as BankSetRefresh says
// (idle banks first, each once per round).

#include "models/hbm/refresh/BankSetRefresh.h"

namespace etsim::hbm {

class PerBankRefresh final : public BankSetRefresh {
public:
    PerBankRefresh(const HbmConfig& config, std::uint32_t pcInChannel);
    const char* name() const override { return "per_bank"; }
};

} // namespace etsim::hbm
