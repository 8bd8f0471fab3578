// etsim against DRAMSys 5.5 on DRAMSys's own HBM2 example (shared/reference/dramsys-configs):
// the same controller configuration and the same traffic, 200,000 reads of 32 B offered one
// every 0.5 ns. DRAMSys's figures (issue 22, docs/hbm.md "Agreement with DRAMSys"):
//   sequential      29.67 GB/s,  9,700 ACT, 110 refreshes
//   uniform random   9.89 GB/s, 200,688 ACT, 332 refreshes
// The targets are 5 % on bandwidth and activates, and one refresh per PC per tREFI.

#include "models/hbm/DramsysImport.h"
#include "tests/support/SharedTraces.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

namespace etsim::hbm {
namespace {

struct Figures {
    double bandwidth;
    std::uint64_t activates;
    std::uint64_t refreshes;
    double seconds;
};

Figures runExample(bool random)
{
    std::optional<std::filesystem::path> reference = etsim::test::sharedReference();
    DramsysSimulation sim =
        loadDramsysSimulation((*reference / "dramsys-configs" / "hbm2-example.json").string());
    DramsysInitiator traffic = *sim.initiator;
    traffic.numRequests = 200000;
    traffic.rwRatio = 1.0;
    traffic.random = random;
    DramsysGenerator generator(traffic, sim.config.organisation.deviceBytes());
    MemoryRunOptions options;
    options.outstanding = 0;
    MemoryRunReport report = runMemory(
        sim.config, [&](MemRequest& r) { return generator.next(r); }, options);
    return Figures{report.bandwidth(),
                   report.rowBuffer->activates,
                   report.rowBuffer->refreshes,
                   static_cast<double>(report.lastDonePs - report.firstIssuePs) * 1e-12};
}

void expectWithin(double value, double reference, double fraction, const char* what)
{
    EXPECT_LE(std::fabs(value / reference - 1.0), fraction)
        << what << ": " << value << " against DRAMSys's " << reference;
}

class DramsysAgreement : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::optional<std::filesystem::path> reference = etsim::test::sharedReference();
        if (!reference || !std::filesystem::exists(*reference / "dramsys-configs"))
            GTEST_SKIP() << "shared/reference/dramsys-configs not found (set ETSIM_REFERENCE)";
    }
};

// One all-bank refresh per PC per tREFI (3.9 us) of the simulated time, two PCs.
std::uint64_t refreshesFor(double seconds)
{
    return 2 * static_cast<std::uint64_t>(seconds / 3.9e-6);
}

TEST_F(DramsysAgreement, SequentialReads)
{
    Figures f = runExample(false);
    expectWithin(f.bandwidth, 29.67e9, 0.05, "bandwidth");
    expectWithin(static_cast<double>(f.activates), 9700, 0.05, "activates");
    EXPECT_NEAR(static_cast<double>(f.refreshes), static_cast<double>(refreshesFor(f.seconds)), 2);
}

TEST_F(DramsysAgreement, UniformRandomReads)
{
    Figures f = runExample(true);
    expectWithin(f.bandwidth, 9.89e9, 0.05, "bandwidth");
    expectWithin(static_cast<double>(f.activates), 200688, 0.05, "activates");
    EXPECT_NEAR(static_cast<double>(f.refreshes), static_cast<double>(refreshesFor(f.seconds)), 2);
}

} // namespace
} // namespace etsim::hbm
