// Platform files: the bundled presets, --set overrides, and every error a user can make.

#include "platforms/PlatformConfig.h"

#include "platforms/Job.h"
#include "tests/support/ErrorOf.h"

#include <gtest/gtest.h>

namespace etsim::platform {
namespace {

using etsim::test::errorOf;

// A two-rank platform small enough to compute by hand.
constexpr const char* twoRanks = R"(name: pair
ranks: 2
accelerator:
  preset: h100_sxm
  hbm: {preset: hbm3_h100}
fabric:
  fidelity: analytical
  topology:
    kind: multi_dim
    dims:
      - {kind: switch, size: 2, bandwidth: "100 GB/s", latency: "1 us"}
driver:
  mode: replay
)";

TEST(PlatformPresets, EveryPresetLoadsWithItsRanksAndModels)
{
    EXPECT_EQ(platformPresetNames(),
              (std::vector<std::string>{
                  "hgx_h100", "hgx_h100_4node", "tpu_v4_torus", "ng1", "dgx_a100_cluster"}));
    PlatformConfig hgx = loadPlatform("hgx_h100");
    EXPECT_EQ(hgx.ranks, 8U);
    EXPECT_EQ(hgx.accelerator.name, "h100_sxm");
    EXPECT_EQ(hgx.hbm.presetName, "hbm3_h100");
    EXPECT_EQ(hgx.fabric.endpointCount(), 8U);
    EXPECT_DOUBLE_EQ(hgx.fabric.dims.at(0).bandwidth.bytesPerSecond(), 450e9);

    PlatformConfig scaleOut = loadPlatform("hgx_h100_4node");
    EXPECT_EQ(scaleOut.ranks, 32U);
    EXPECT_EQ(scaleOut.ranksPerNode, 8U);
    ASSERT_EQ(scaleOut.fabric.dims.size(), 2U);
    EXPECT_DOUBLE_EQ(scaleOut.fabric.dims[1].bandwidth.bytesPerSecond(), 50e9); // 400 Gb/s

    PlatformConfig tpu = loadPlatform("tpu_v4_torus");
    EXPECT_EQ(tpu.ranks, 64U);
    EXPECT_EQ(tpu.fabric.dims.size(), 3U);
    EXPECT_EQ(tpu.hbm.organisation.stacks, 4U);

    PlatformConfig a100 = loadPlatform("dgx_a100_cluster");
    EXPECT_EQ(a100.ranks, 1024U);
    EXPECT_EQ(a100.accelerator.name, "a100_sxm");
    EXPECT_EQ(a100.hbm.presetName, "hbm2e_a100");
    EXPECT_EQ(a100.fabric.endpointCount(), 1024U);
    EXPECT_DOUBLE_EQ(a100.fabric.dims.at(0).bandwidth.bytesPerSecond(), 300e9);
    EXPECT_DOUBLE_EQ(a100.fabric.dims.at(1).bandwidth.bytesPerSecond(), 25e9); // 200 Gb/s
    // Cut to the 8 nodes of one GPT-3 pipeline replica (docs/validation.md).
    PlatformConfig replica =
        loadPlatform("dgx_a100_cluster", {{"ranks", "64"}, {"fabric.topology.dims[1].size", "8"}});
    EXPECT_EQ(replica.fabric.endpointCount(), 64U);

    PlatformConfig ng1 = loadPlatform("ng1");
    EXPECT_EQ(ng1.ranks, 72U);
    EXPECT_EQ(ng1.accelerator.name, "ng1");
    EXPECT_EQ(ng1.hbm.organisation.stacks, 8U);
    EXPECT_DOUBLE_EQ(ng1.fabric.dims.at(0).bandwidth.bytesPerSecond(), 1800e9);
}

TEST(PlatformPresets, UnknownNameListsThePresets)
{
    EXPECT_EQ(errorOf([] { loadPlatform("dgx"); }),
              "unknown platform \"dgx\": not a file and not a bundled preset (hgx_h100, "
              "hgx_h100_4node, tpu_v4_torus, ng1, dgx_a100_cluster)");
}

TEST(PlatformConfig, ReadsDriverOptions)
{
    PlatformConfig config = loadPlatformString(twoRanks, "pair.yaml");
    EXPECT_EQ(config.name, "pair");
    EXPECT_EQ(config.ranksPerNode, 2U);
    EXPECT_EQ(config.driver.compute, et::ExecutionMode::Replay);
    EXPECT_EQ(config.driver.communication, et::ExecutionMode::Replay);
    EXPECT_EQ(config.fabric.fidelity, net::Fidelity::Analytical);
    EXPECT_EQ(config.resolved["fabric"]["topology"]["dims"][0]["size"], "2");
}

TEST(PlatformConfig, OverridesReachPresetsAndTheExpandedFabric)
{
    PlatformConfig config = loadPlatform("hgx_h100",
                                         {{"accelerator.sram.capacity", "64 MiB"},
                                          {"fabric.topology.dims[0].bandwidth", "400 GB/s"},
                                          {"driver.mode", "replay"},
                                          {"accelerator.hbm.analytic.efficiency", "0.5"}});
    EXPECT_EQ(config.accelerator.sram.capacity.bytes(), 64ULL << 20);
    EXPECT_DOUBLE_EQ(config.fabric.dims[0].bandwidth.bytesPerSecond(), 400e9);
    EXPECT_DOUBLE_EQ(config.fabric.dims[0].efficiency, 0.82); // the rest of the preset stays
    EXPECT_EQ(config.driver.memory, et::ExecutionMode::Replay);
    EXPECT_DOUBLE_EQ(config.hbm.analytic.efficiency, 0.5);
    EXPECT_EQ(config.resolved["accelerator"]["sram"]["capacity"], "64 MiB");
}

// parseOverride keeps the parsed value; every platform loaded with it gets its own copy, so
// expanding a preset inside one platform's tree does not leak into the next load.
TEST(PlatformConfig, AParsedOverrideLoadsTheSameIntoEveryPlatform)
{
    const std::vector<Override> overrides = {
        parseOverride("accelerator={preset: h100_sxm, sram: {capacity: 64 MiB}}"),
        parseOverride("fabric.topology.dims[0].bandwidth=400 GB/s")};
    ASSERT_TRUE(overrides[0].parsed);
    PlatformConfig first = loadPlatform("hgx_h100", overrides);
    PlatformConfig second = loadPlatform("hgx_h100", overrides);
    EXPECT_EQ(first.accelerator.sram.capacity.bytes(), 64ULL << 20);
    EXPECT_DOUBLE_EQ(first.fabric.dims[0].bandwidth.bytesPerSecond(), 400e9);
    EXPECT_EQ(first.resolved, second.resolved);
    // A later override that edits inside the first one's tree edits this load's copy only: a
    // sweep point that drops it gets the first override's own value back.
    PlatformConfig edited =
        loadPlatform("hgx_h100", {overrides[0], parseOverride("accelerator.sram.capacity=1 MiB")});
    EXPECT_EQ(edited.accelerator.sram.capacity.bytes(), 1ULL << 20);
    EXPECT_EQ(loadPlatform("hgx_h100", {overrides[0]}).accelerator.sram.capacity.bytes(),
              64ULL << 20);
    // The same text made by hand (no parsed value) loads to the same platform.
    PlatformConfig byHand = loadPlatform(
        "hgx_h100",
        {{overrides[0].path, overrides[0].value}, {overrides[1].path, overrides[1].value}});
    EXPECT_EQ(byHand.resolved, first.resolved);
}

// The report records every value that ran: the accelerator and HBM presets expanded, the
// driver's defaults written out, --set overrides in place.
TEST(PlatformConfig, ResolvedExpandsAcceleratorAndHbmPresets)
{
    PlatformConfig config = loadPlatform(
        "hgx_h100", {{"accelerator.hbm.timing.cl", "25"}, {"accelerator.dma.engines", "8"}});
    const nlohmann::ordered_json& accelerator = config.resolved["accelerator"];
    // Only in the h100_sxm preset (the platform file names the preset and nothing else).
    EXPECT_EQ(accelerator["preset"], "h100_sxm");
    EXPECT_EQ(accelerator["tensor"]["model"], "gpu_tiles");
    EXPECT_EQ(accelerator["tensor"]["sm_count"], "132");
    EXPECT_EQ(accelerator["tensor"]["clock"], "1.83 GHz");
    EXPECT_EQ(accelerator["tensor"]["tiles"][0], nlohmann::ordered_json({"128", "256"}));
    EXPECT_EQ(accelerator["tensor"]["pipe_efficiency"], "0.8");
    EXPECT_EQ(accelerator["sram"]["capacity"], "50 MB");
    EXPECT_EQ(accelerator["launch_overhead"], "2 us");
    EXPECT_EQ(accelerator["default_dtype"], "bf16");
    // Only in the hbm3_h100 preset.
    const nlohmann::ordered_json& hbm = accelerator["hbm"];
    EXPECT_EQ(hbm["preset"], "hbm3_h100");
    EXPECT_EQ(hbm["organisation"]["stacks"], "5");
    EXPECT_EQ(hbm["organisation"]["data_rate"], "653.75 MB/s"); // 5.23 Gb/s per pin
    EXPECT_EQ(hbm["analytic"]["efficiency"], "0.886");
    EXPECT_EQ(hbm["timing"]["rcd_rd"], std::to_string(config.hbm.timing.rcdRd));
    EXPECT_EQ(hbm["address_map"]["byte"], nlohmann::ordered_json({"0", "1", "2", "3", "4"}));
    // The overrides.
    EXPECT_EQ(hbm["timing"]["cl"], "25");
    EXPECT_EQ(config.hbm.timing.cl, 25U);
    EXPECT_EQ(accelerator["dma"]["engines"], "8");
    // Driver defaults the file does not write.
    EXPECT_EQ(config.resolved["driver"]["window"], "256");
    EXPECT_EQ(config.resolved["driver"]["limits"]["host"], "1");
    EXPECT_EQ(config.resolved["driver"]["compute_mode"], "model");
}

// The resolved tree is itself a platform file that loads to the same values, for every preset
// (GPU tiles, systolic arrays, every HBM generation they use).
TEST(PlatformConfig, ResolvedTreeLoadsBackToTheSamePlatform)
{
    for (const std::string& name : platformPresetNames()) {
        SCOPED_TRACE(name);
        PlatformConfig first = loadPlatform(name, {{"accelerator.sram.efficiency", "0.7"}});
        PlatformConfig again = loadPlatformString(first.resolved.dump(), "resolved.json");
        EXPECT_EQ(again.resolved, first.resolved);
        EXPECT_EQ(again.accelerator.name, first.accelerator.name);
        EXPECT_DOUBLE_EQ(again.accelerator.sram.efficiency, 0.7);
        EXPECT_EQ(again.accelerator.tensor.detail.index(), first.accelerator.tensor.detail.index());
        EXPECT_EQ(again.accelerator.tensor.peak.get(DataType::Bf16).flopsPerSecond(),
                  first.accelerator.tensor.peak.get(DataType::Bf16).flopsPerSecond());
        EXPECT_EQ(again.hbm.timing.rfc, first.hbm.timing.rfc);
        EXPECT_EQ(again.hbm.addressMap.field(hbm::AddressField::Row),
                  first.hbm.addressMap.field(hbm::AddressField::Row));
        EXPECT_EQ(again.hbm.analytic.latency.ps(), first.hbm.analytic.latency.ps());
        EXPECT_EQ(again.hbm.organisation.devicePeak().bytesPerSecond(),
                  first.hbm.organisation.devicePeak().bytesPerSecond());
    }
}

TEST(PlatformConfig, FabricPresetCanBeSwitchedByOverride)
{
    PlatformConfig config =
        loadPlatform("hgx_h100", {{"fabric.preset", "tpu_torus"}, {"ranks", "64"}});
    EXPECT_EQ(config.ranks, 64U);
    EXPECT_EQ(config.fabric.dims.size(), 3U);
}

TEST(PlatformConfig, UnknownOverrideKeyNamesTheOverride)
{
    EXPECT_EQ(errorOf([] {
                  loadPlatform("hgx_h100", {{"accelerator.sramm.capacity", "1"}});
              }),
              "--set accelerator.sramm.capacity=1: accelerator.sramm: unknown key (did you mean "
              "\"sram\"?)");
    EXPECT_EQ(errorOf([] {
                  loadPlatform("hgx_h100", {{"fabric.topology.dims[3].size", "2"}});
              }),
              "--set fabric.topology.dims[3].size=2: fabric.topology.dims[3]: index out of range: "
              "the list has 1 elements, valid indices are 0 to 0");
}

TEST(PlatformConfig, BadOverrideValueNamesTheOverride)
{
    EXPECT_EQ(errorOf([] {
                  loadPlatform("hgx_h100", {{"accelerator.sram.capacity", "lots"}});
              }),
              "--set accelerator.sram.capacity=lots: accelerator.sram.capacity: \"lots\": not a "
              "number, expected a size such as \"80 GiB\"");
}

TEST(PlatformConfig, OverrideSyntax)
{
    Override ok = parseOverride("fabric.topology.dims[0].bandwidth=400 GB/s");
    EXPECT_EQ(ok.path, "fabric.topology.dims[0].bandwidth");
    EXPECT_EQ(ok.value, "400 GB/s");
    EXPECT_EQ(errorOf([] { parseOverride("ranks"); }),
              "--set ranks: expected key.path=value, e.g. --set ranks=16");
    EXPECT_EQ(errorOf([] { parseOverride("=3"); }), "--set =3: the key path before '=' is empty");
}

// A path is keys and [N] indices: a stray ']' or text glued to an index is a syntax error
// that names the override, not a key the platform lacks.
TEST(PlatformConfig, OverridePathsWithStrayBracketsAreSyntaxErrors)
{
    EXPECT_EQ(errorOf([] {
                  loadPlatform("hgx_h100", {{"fabric.topology.dims[0]].size", "2"}});
              }),
              "--set fabric.topology.dims[0]].size=2: an index is followed by '.', '[' or the end "
              "of the path, e.g. dims[0].size");
    EXPECT_EQ(errorOf([] {
                  loadPlatform("hgx_h100", {{"fabric.topology.dims[0]size", "2"}});
              }),
              "--set fabric.topology.dims[0]size=2: an index is followed by '.', '[' or the end "
              "of the path, e.g. dims[0].size");
    EXPECT_EQ(errorOf([] {
                  loadPlatform("hgx_h100", {{"ranks]", "2"}});
              }),
              "--set ranks]=2: a ']' without its '['; an index is written [N], e.g. dims[0]");
    // Nested indices still work.
    EXPECT_EQ(loadPlatform("hgx_h100", {{"fabric.topology.dims[0].size", "8"}}).ranks, 8U);
}

TEST(PlatformConfig, RankCountMustMatchTheFabric)
{
    EXPECT_EQ(errorOf([] {
                  loadPlatformString(twoRanks, "pair.yaml", {{"ranks", "4"}});
              }),
              "pair.yaml:9:5: fabric.topology: the topology has 2 endpoints but the platform has "
              "4 ranks; make them equal");
}

TEST(PlatformConfig, ErrorsNameFileLineAndKey)
{
    EXPECT_EQ(errorOf([] {
                  loadPlatformString(
                      "accelerator: {preset: h100_sxm}\nfabric: {preset: hgx_h100}\n", "p.yaml");
              }),
              "p.yaml:1:1: ranks: missing required key (number of ranks (accelerators), e.g. 8)");
    EXPECT_EQ(errorOf([] {
                  loadPlatformString("ranks: 8\naccelerator: {preset: h200}\nfabric: {preset: "
                                     "hgx_h100}\n",
                                     "p.yaml");
              }),
              "p.yaml:2:23: accelerator.preset: unknown preset \"h200\"; one of h100_sxm, "
              "a100_sxm, tpu_v4, ng1, ng1_systolic");
    EXPECT_EQ(errorOf([] {
                  loadPlatformString("ranks: 8\naccelerator: {preset: h100_sxm}\nfabric: {preset: "
                                     "nvl72}\n",
                                     "p.yaml");
              }),
              "p.yaml:3:18: fabric.preset: unknown network preset \"nvl72\"; known presets: "
              "hgx_h100, hgx_h100_scaleout, tpu_torus");
    // A key that is no name beside a fabric preset, which is merged before keys are checked
    // (fuzzing found it ending the process with yaml-cpp's bad conversion).
    EXPECT_EQ(errorOf([] {
                  loadPlatformString("ranks: 8\naccelerator: {preset: h100_sxm}\nfabric:\n  "
                                     "preset: hgx_h100\n  ? [a]\n  : 1\n",
                                     "p.yaml");
              }),
              "p.yaml:5:5: fabric: a key here is a list; keys are names (write `name: value`)");
    EXPECT_EQ(errorOf([] {
                  loadPlatformString("ranks: 8\naccelerator: {preset: h100_sxm}\nfabric:\n  "
                                     "preset: hgx_h100\n  topology:\n    ? {x: 1}\n    : 2\n",
                                     "p.yaml");
              }),
              "p.yaml:6:7: fabric.topology: a key here is a map; keys are names (write `name: "
              "value`)");
    EXPECT_EQ(errorOf([] {
                  loadPlatformString(
                      "ranks: 8\nranks_per_node: 3\naccelerator: {preset: h100_sxm}\nfabric: "
                      "{preset: hgx_h100}\n",
                      "p.yaml");
              }),
              "p.yaml:2:17: ranks_per_node: must divide ranks (8)");
    EXPECT_EQ(errorOf([] {
                  loadPlatformString(
                      "ranks: 8\naccelerator: {preset: h100_sxm}\nfabric: {preset: hgx_h100}\n"
                      "driver: {mode: fast}\n",
                      "p.yaml");
              }),
              "p.yaml:4:16: driver.mode: expected one of model, replay, got \"fast\"");
    EXPECT_EQ(errorOf([] {
                  loadPlatformString(
                      "ranks: 8\naccelerator: {preset: h100_sxm}\nfabric: {preset: hgx_h100}\n"
                      "nodes: 1\n",
                      "p.yaml");
              }),
              "p.yaml:4:1: nodes: unknown key; known keys: name, description, ranks, "
              "ranks_per_node, accelerator, fabric, driver");
    EXPECT_EQ(errorOf([] { loadPlatformString("ranks: [8\n", "p.yaml"); }).substr(0, 21),
              "p.yaml:2:1: invalid Y");
    EXPECT_EQ(errorOf([] { loadPlatformFile("/nonexistent/p.yaml"); }),
              "/nonexistent/p.yaml: cannot open: No such file or directory");
}

// Each instant counted once: compute, then memory, then communication, then idle.
TEST(Breakdown, PrecedenceSumsToTheFinishTime)
{
    using et::Engine;
    RankBreakdown b = breakdown(3,
                                30000,
                                {{0, 10000, Engine::Compute},
                                 {5000, 20000, Engine::Communication},
                                 {15000, 25000, Engine::Memory},
                                 {2000, 4000, Engine::Host},
                                 {0, 0, Engine::Instant}});
    EXPECT_EQ(b.rank, 3U);
    EXPECT_EQ(b.computePs, 10000U);
    EXPECT_EQ(b.memoryPs, 10000U);     // 15..25
    EXPECT_EQ(b.exposedCommPs, 5000U); // 10..15
    EXPECT_EQ(b.idlePs, 5000U);        // 25..30
    EXPECT_EQ(b.computePs + b.memoryPs + b.exposedCommPs + b.idlePs, b.finishPs);
    EXPECT_EQ(b.commPs, 15000U);
    EXPECT_EQ(b.overlapPs, 5000U);           // 5..10
    EXPECT_EQ(b.astraExposedCommPs, 20000U); // 30 - 10
}

} // namespace
} // namespace etsim::platform
