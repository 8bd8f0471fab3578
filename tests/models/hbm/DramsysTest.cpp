// The controller mechanisms a DRAMSys configuration selects, each checked on a command
// sequence computed by hand from DRAMSys's HBM2 example memspec (memspec/HBM2.json; the
// timings are listed in DramsysExample.h), and the import of DRAMSys's configuration files.
// The request buffers have their own sequences in RequestBufferTest.

#include "kernel/Config.h"
#include "kernel/Error.h"
#include "models/hbm/DramsysImport.h"
#include "models/hbm/scheduler/CommandMuxIf.h"
#include "tests/models/hbm/DramsysExample.h"
#include "tests/support/SharedTraces.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace etsim::hbm::test {
namespace {

constexpr std::uint64_t ns = 1000; // ps

TEST(DramsysLatency, IdleReadRowHitAndRowConflictAsDramsysCountsThem)
{
    DeviceRun run(dramsysHbm2());
    // Idle bank: think 1 + ACT to RD 13 + RL 17 + DQSCK 1 + burst 2 = 34 ns.
    run.submitAt(0, 1, at(0, 0, 0, 1, 0), 32);
    // Row hit, long after: think 1 + RL 17 + DQSCK 1 + burst 2 = 21 ns.
    run.submitAt(1000 * ns, 2, at(0, 0, 0, 1, 1), 32);
    // Row conflict: think 1 + PRE to ACT 13 + ACT to RD 13 + 20 = 47 ns.
    run.submitAt(2000 * ns, 3, at(0, 0, 0, 2, 0), 32);
    run.drain();
    EXPECT_EQ(run.donePs.at(1), 34 * ns);
    EXPECT_EQ(run.donePs.at(2) - 1000 * ns, 21 * ns);
    EXPECT_EQ(run.donePs.at(3) - 2000 * ns, 47 * ns);
}

TEST(DramsysCommands, PseudoChannelsShareTheCommandBusesOfTheirChannel)
{
    DeviceRun run(dramsysHbm2());
    std::vector<Issued> issued;
    watch(run, issued);
    run.submitAt(0, 1, at(0, 0, 0, 1, 0), 32);
    run.submitAt(0, 2, at(1, 0, 0, 1, 0), 32);
    run.drain();
    // Request 1 enters at cycle 1 and activates; request 2 enters at 2 (one per cycle), but
    // the ACT of request 1 holds the shared row bus for cycles 1 and 2: its ACT goes at 3.
    std::vector<Issued> expected{
        {1, 0, "act", 0}, {3, 1, "act", 0}, {14, 0, "rd", 0}, {16, 1, "rd", 0}};
    EXPECT_EQ(issued, expected);
    EXPECT_EQ(run.donePs.at(2), (16 + 20) * ns);

    // With a bus per PC the second ACT goes as soon as its request has entered.
    HbmConfig own = dramsysHbm2();
    own.controller.commandBus = CommandBus::PerPc;
    DeviceRun apart(own);
    std::vector<Issued> apartIssued;
    watch(apart, apartIssued);
    apart.submitAt(0, 1, at(0, 0, 0, 1, 0), 32);
    apart.submitAt(0, 2, at(1, 0, 0, 1, 0), 32);
    apart.drain();
    std::vector<Issued> expectedApart{
        {1, 0, "act", 0}, {2, 1, "act", 0}, {14, 0, "rd", 0}, {15, 1, "rd", 0}};
    EXPECT_EQ(apartIssued, expectedApart);
}

// The example with all-bank refresh due every 1,000 cycles, soon enough for a short sequence.
HbmConfig dramsysHbm2RefreshingEvery1000()
{
    HbmConfig config = dramsysHbm2();
    config.controller.refresh = RefreshKind::AllBank;
    config.timing.refi = 1000;
    return config;
}

TEST(DramsysCommands, AllBankRefreshClosesTheRowsWithOnePrea)
{
    DeviceRun run(dramsysHbm2RefreshingEvery1000());
    std::vector<Issued> issued;
    watch(run, issued);
    // Two banks (0, and 4 in the next bank group) open rows; a read arrives after the refresh
    // fell due (cycle 1000) while the PC was idle: the controller closes both rows with one
    // PREA when it enters (cycle 1101), refreshes tRP later (1115) and activates tRFC - 1
    // after that (1334).
    run.submitAt(0, 1, at(0, 0, 0, 1, 0), 32);
    run.submitAt(0, 2, at(0, 1, 0, 1, 0), 32);
    run.submitAt(1100 * ns, 3, at(0, 0, 0, 1, 1), 32);
    run.drain();
    std::vector<Issued> expected{{1, 0, "act", 0},
                                 {5, 0, "act", 4}, // tRRDS after the first ACT
                                 {14, 0, "rd", 0},
                                 {18, 0, "rd", 4},
                                 {1101, 0, "prea", 0},
                                 {1115, 0, "refab", 0},
                                 {1334, 0, "act", 0},
                                 {1347, 0, "rd", 0}};
    EXPECT_EQ(issued, expected);
    EXPECT_EQ(run.donePs.at(3), (1347 + 20) * ns);
}

TEST(DramsysCommands, RefreshesOfTheTwoPseudoChannelsAreStaggered)
{
    HbmConfig config = dramsysHbm2RefreshingEvery1000();
    DeviceRun run(config);
    std::vector<Issued> issued;
    watch(run, issued);
    // PC 1 of 2 (bit-reversed 1) refreshes first at tREFI - tREFI / 2 = cycle 500, PC 0 at
    // 1000. A read to PC 1 at 600 ns finds its refresh due: PREA at entry (601), REF tRP later.
    run.submitAt(0, 1, at(1, 0, 0, 1, 0), 32);
    run.submitAt(600 * ns, 2, at(1, 0, 0, 1, 1), 32);
    run.drain();
    std::vector<Issued> expected{{1, 1, "act", 0},
                                 {14, 1, "rd", 0},
                                 {601, 1, "prea", 0},
                                 {615, 1, "refab", 0},
                                 {834, 1, "act", 0},
                                 {847, 1, "rd", 0}};
    EXPECT_EQ(issued, expected);
    // With aligned starts PC 1 refreshes at 1000 like PC 0: the read at 600 is a row hit.
    config.controller.refreshStart = RefreshStart::Aligned;
    DeviceRun aligned(config);
    aligned.submitAt(0, 1, at(1, 0, 0, 1, 0), 32);
    aligned.submitAt(600 * ns, 2, at(1, 0, 0, 1, 1), 32);
    aligned.drain();
    EXPECT_EQ(aligned.donePs.at(2) - 600 * ns, 21 * ns);
}

TEST(DramsysMux, OldestPicksTheCommandThatFinishesFirstThenTheOlder)
{
    Candidate act;
    act.command = Command::Act;
    act.ready = 10;
    act.sequence = 1;
    Candidate pre;
    pre.command = Command::Pre;
    pre.ready = 10;
    pre.sequence = 5;
    // Both legal at 10: PRE ends at 11, ACT (two cycles) at 12.
    EXPECT_TRUE(finishesFirst(pre, act));
    // PRE legal at 11 ends at 12 like the ACT: the older request wins.
    pre.ready = 11;
    EXPECT_TRUE(finishesFirst(act, pre));
    EXPECT_FALSE(finishesFirst(pre, act));
    // Between the best row and column command: the one ready first, then the older.
    Candidate rd;
    rd.command = Command::Rd;
    rd.ready = 10;
    rd.sequence = 9;
    EXPECT_EQ(&readyFirst(pre, rd), &rd);
    EXPECT_EQ(&readyFirst(act, rd), &act);
}

TEST(DramsysMux, OldestCountsCommandsLegalSinceEarlierAsReadyNow)
{
    // An ACT legal since cycle 9 and a PRE legal since 34, both offered at 261: DRAMSys's
    // checker answers 261 for both, so the PRE (ends 262) beats the ACT (ends 263) although
    // the ACT has been legal longer. A RD legal since 100 and one legal since 200 of an older
    // request: both ready now, the older wins.
    Candidate act;
    act.command = Command::Act;
    act.ready = 9;
    act.sequence = 2;
    Candidate pre;
    pre.command = Command::Pre;
    pre.ready = 34;
    pre.sequence = 5;
    Candidate rdNew;
    rdNew.command = Command::Rd;
    rdNew.ready = 100;
    rdNew.sequence = 7;
    Candidate rdOld = rdNew;
    rdOld.ready = 200;
    rdOld.sequence = 3;
    std::vector<Candidate> scratch;
    Offer out;
    makeCommandMux(CommandMux::Oldest)
        ->offer(261,
                {act, pre, rdNew, rdOld},
                *makeScheduler(SchedulerKind::FrFcfs),
                neverCycle,
                scratch,
                out);
    ASSERT_TRUE(out.hasRas && out.hasCas);
    EXPECT_EQ(out.ras.command, Command::Pre);
    EXPECT_EQ(out.ras.ready, 261U);
    EXPECT_EQ(out.cas.sequence, 3U);
    // Of the two, both ready now: the older request (the RD of request 3).
    EXPECT_EQ(&readyFirst(out.ras, out.cas), &out.cas);
}

std::filesystem::path referenceConfigs()
{
    std::optional<std::filesystem::path> reference = etsim::test::sharedReference();
    if (!reference || !std::filesystem::exists(*reference / "dramsys-configs"))
        return {};
    return *reference / "dramsys-configs";
}

TEST(DramsysImport, MapsEveryFieldOfTheHbm2Example)
{
    std::filesystem::path configs = referenceConfigs();
    if (configs.empty())
        GTEST_SKIP() << "shared/reference/dramsys-configs not found (set ETSIM_REFERENCE)";
    DramsysSimulation sim = loadDramsysSimulation((configs / "hbm2-example.json").string());
    HbmConfig expected = dramsysHbm2();
    expected.controller.refresh = RefreshKind::AllBank;
    const HbmConfig& c = sim.config;
    EXPECT_EQ(sim.simulationId, "hbm2-example");
    EXPECT_EQ(c.organisation.pcCount(), 2U);
    EXPECT_EQ(c.organisation.banksPerPc(), 32U);
    EXPECT_EQ(c.organisation.bankGroupsPerPc(), 8U);
    EXPECT_EQ(c.organisation.page.bytes(), 1024U);
    EXPECT_EQ(c.organisation.deviceBytes(), std::uint64_t{2} << 30);
    EXPECT_DOUBLE_EQ(c.organisation.devicePeak().bytesPerSecond(), 32e9);
    EXPECT_EQ(toYaml(c)["timing"].as<YAML::Node>().size(), toYaml(expected)["timing"].size());
    for (const auto& entry : toYaml(expected)["timing"])
        EXPECT_EQ(toYaml(c)["timing"][entry.first.as<std::string>()].as<std::string>(),
                  entry.second.as<std::string>())
            << entry.first.as<std::string>();
    for (const auto& entry : toYaml(expected)["controller"])
        EXPECT_EQ(toYaml(c)["controller"][entry.first.as<std::string>()].as<std::string>(),
                  entry.second.as<std::string>())
            << entry.first.as<std::string>();
    EXPECT_EQ(c.addressMap.bits, expected.addressMap.bits);
    const DramsysInitiator& g = *sim.initiator;
    EXPECT_EQ(g.kind, DramsysInitiator::Kind::Generator);
    EXPECT_DOUBLE_EQ(g.clock.hz(), 2e9);
    EXPECT_EQ(g.dataLength, 32U);
    EXPECT_EQ(g.numRequests, 2000U);
    EXPECT_DOUBLE_EQ(g.rwRatio, 0.85);
    EXPECT_FALSE(g.random);
}

TEST(DramsysImport, PlatformHbmSectionTakesADramsysFile)
{
    std::filesystem::path configs = referenceConfigs();
    if (configs.empty())
        GTEST_SKIP() << "shared/reference/dramsys-configs not found (set ETSIM_REFERENCE)";
    std::string file = (configs / "hbm2-example.json").string();
    HbmConfig fromYaml =
        loadConfigString("dramsys: " + file + "\n", "platform.yaml").map(parseHbmConfig);
    HbmConfig direct = loadDramsysSimulation(file).config;
    EXPECT_EQ(fromYaml.fidelity, Fidelity::Detailed);
    EXPECT_EQ(YAML::Dump(toYaml(fromYaml)["controller"]), YAML::Dump(toYaml(direct)["controller"]));
    EXPECT_EQ(YAML::Dump(toYaml(fromYaml)["timing"]), YAML::Dump(toYaml(direct)["timing"]));
    // The analytic fidelity's latency is the imported memory's idle read: 1 + 13 + 18 + 2.
    EXPECT_EQ(fromYaml.analytic.latency.ps(), 34 * ns);
    HbmConfig analytic =
        loadConfigString("dramsys: " + file + "\nfidelity: analytic\n", "platform.yaml")
            .map(parseHbmConfig);
    EXPECT_EQ(analytic.fidelity, Fidelity::Analytic);

    std::string error;
    try {
        loadConfigString("dramsys: " + file + "\npreset: hbm2\n", "platform.yaml")
            .map(parseHbmConfig);
    } catch (const Error& e) {
        error = e.what();
    }
    EXPECT_NE(error.find("platform.yaml:1:"), std::string::npos) << error;
    EXPECT_NE(error.find("remove `preset`"), std::string::npos) << error;
}

// A copy of the example in a temporary folder, with `from` replaced by `to` in `part`.
std::string exampleWith(const std::string& part,
                        const std::string& from,
                        const std::string& to,
                        const std::filesystem::path& configs)
{
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("etsim-dramsys-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::copy(configs, dir, std::filesystem::copy_options::recursive);
    std::filesystem::path file = dir / part;
    std::filesystem::permissions(file, std::filesystem::perms::owner_all);
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t where = text.find(from);
    EXPECT_NE(where, std::string::npos) << from;
    text.replace(where, from.size(), to);
    std::ofstream(file) << text;
    return (dir / "hbm2-example.json").string();
}

std::string importError(const std::string& path)
{
    try {
        loadDramsysSimulation(path);
    } catch (const Error& error) {
        return error.what();
    }
    return "";
}

TEST(DramsysImport, MapsPerBankRefreshAndItsFlexibility)
{
    std::filesystem::path configs = referenceConfigs();
    if (configs.empty())
        GTEST_SKIP() << "shared/reference/dramsys-configs not found (set ETSIM_REFERENCE)";
    std::string file = exampleWith("mcconfig/fr_fcfs.json",
                                   "\"AllBank\",\n        \"RefreshMaxPostponed\": 0,\n"
                                   "        \"RefreshMaxPulledin\": 0",
                                   "\"PerBank\", \"RefreshMaxPostponed\": 2, "
                                   "\"RefreshMaxPulledin\": 3",
                                   configs);
    const ControllerConfig c = loadDramsysSimulation(file).config.controller;
    EXPECT_EQ(c.refresh, RefreshKind::PerBank);
    // Counted in all-bank intervals, as DRAMSys's mcconfig counts them.
    EXPECT_EQ(c.refreshMaxPostponed, 2U);
    EXPECT_EQ(c.refreshMaxPulledIn, 3U);
    std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                ("etsim-dramsys-" + std::to_string(::getpid())));
}

TEST(DramsysImport, MapsTheReadWriteAndSharedBuffers)
{
    std::filesystem::path configs = referenceConfigs();
    if (configs.empty())
        GTEST_SKIP() << "shared/reference/dramsys-configs not found (set ETSIM_REFERENCE)";
    std::string file =
        exampleWith("mcconfig/fr_fcfs.json",
                    "\"Bankwise\"",
                    R"("ReadWrite", "RequestBufferSizeRead": 6, "RequestBufferSizeWrite": 3)",
                    configs);
    ControllerConfig c = loadDramsysSimulation(file).config.controller;
    EXPECT_EQ(c.buffer, RequestBuffer::ReadWrite);
    EXPECT_EQ(c.readBuffer, 6U);
    EXPECT_EQ(c.writeBuffer, 3U);
    file = exampleWith("mcconfig/fr_fcfs.json", "\"Bankwise\"", "\"Shared\"", configs);
    c = loadDramsysSimulation(file).config.controller;
    EXPECT_EQ(c.buffer, RequestBuffer::Shared);
    // RequestBufferSize, per channel for a shared buffer.
    EXPECT_EQ(c.sharedBuffer, c.bankBuffer);
    std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                ("etsim-dramsys-" + std::to_string(::getpid())));
}

TEST(DramsysImport, RefusesWhatItDoesNotModelNamingFileAndKey)
{
    std::filesystem::path configs = referenceConfigs();
    if (configs.empty())
        GTEST_SKIP() << "shared/reference/dramsys-configs not found (set ETSIM_REFERENCE)";
    std::string e =
        importError(exampleWith("mcconfig/fr_fcfs.json", "\"FrFcfs\"", "\"FrFcfsGrp\"", configs));
    EXPECT_NE(e.find("fr_fcfs.json: mcconfig.Scheduler: \"FrFcfsGrp\" is not modelled"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("supported: FrFcfs"), std::string::npos) << e;

    e = importError(exampleWith("mcconfig/fr_fcfs.json",
                                "\"RefreshMaxPostponed\": 0",
                                "\"RefreshMaxPostponed\": 9",
                                configs));
    EXPECT_NE(e.find("mcconfig.RefreshMaxPostponed: 9 is more than JEDEC allows"),
              std::string::npos)
        << e;

    // DRAMSys's own per-2-bank variant: an HBM2 memspec has no per-2-bank refresh.
    e = importError(exampleWith(
        "hbm2-example.json", "mcconfig/fr_fcfs.json", "mcconfig/fr_fcfs_refp2b.json", configs));
    EXPECT_NE(e.find("fr_fcfs_refp2b.json: mcconfig.RefreshPolicy: \"Per2Bank\" is not modelled"),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("use AllBank or PerBank"), std::string::npos) << e;

    // A number beyond double's range is nlohmann's out_of_range, not a parse_error.
    e = importError(exampleWith("memspec/HBM2.json", "\"CCDL\": 3,", "\"CCDL\": 3e999,", configs));
    EXPECT_NE(e.find("HBM2.json: not valid JSON: [json.exception.out_of_range.406]"),
              std::string::npos)
        << e;

    e = importError(
        exampleWith("memspec/HBM2.json", "\"CCDL\": 3,", "\"CCDL\": 3, \"tFOO\": 1,", configs));
    EXPECT_NE(e.find("HBM2.json: memspec.memtimingspec.tFOO: not modelled by etsim"),
              std::string::npos)
        << e;

    e = importError(exampleWith("hbm2-example.json",
                                "\"addressDistribution\": \"sequential\"",
                                "\"addressDistribution\": \"zigzag\"",
                                configs));
    EXPECT_NE(e.find("tracesetup[0].addressDistribution: supported: sequential, random"),
              std::string::npos)
        << e;
    std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                ("etsim-dramsys-" + std::to_string(::getpid())));
}

TEST(DramsysGenerator, SequentialWrapsAndRandomStaysAligned)
{
    DramsysInitiator g;
    g.clock = Frequency::fromHz(2e9);
    g.dataLength = 32;
    g.numRequests = 4;
    g.rwRatio = 1.0;
    g.minAddress = 0;
    g.maxAddress = 64;
    DramsysGenerator sequential(g, std::uint64_t{2} << 30);
    MemRequest r;
    std::vector<std::uint64_t> addresses;
    std::vector<std::uint64_t> times;
    while (sequential.next(r)) {
        addresses.push_back(r.address);
        times.push_back(r.notBeforePs);
        EXPECT_FALSE(r.write);
    }
    // i × 32 mod (max - min) + min; one request per 0.5 ns.
    EXPECT_EQ(addresses, (std::vector<std::uint64_t>{0, 32, 0, 32}));
    EXPECT_EQ(times, (std::vector<std::uint64_t>{0, 500, 1000, 1500}));

    g.random = true;
    g.numRequests = 1000;
    g.rwRatio = 0.5;
    g.minAddress.reset();
    g.maxAddress.reset();
    DramsysGenerator random(g, std::uint64_t{2} << 30);
    std::uint64_t writes = 0;
    while (random.next(r)) {
        EXPECT_EQ(r.address % 32, 0U);
        EXPECT_LT(r.address, std::uint64_t{2} << 30);
        writes += r.write;
    }
    EXPECT_GT(writes, 400U);
    EXPECT_LT(writes, 600U);
}

} // namespace
} // namespace etsim::hbm::test
