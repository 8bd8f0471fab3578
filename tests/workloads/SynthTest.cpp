// Longer than most files: one case per field, error and sampling rule of the synthetic-trace
// model, all on the same few generated source workloads.
// The synthetic-trace model: learning from generated workloads, sampling valid traces that
// keep the learned statistics, determinism, the JSON file and its errors.

#include "et_driver/NodeTensors.h"
#include "et_driver/TraceReader.h"
#include "et_driver/TraceSet.h"
#include "et_driver/TraceWriter.h"
#include "kernel/Error.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/TempDir.h"
#include "tests/workloads/WorkloadTestSupport.h"
#include "workloads/Microbench.h"
#include "workloads/Transformer.h"
#include "workloads/synth/Compare.h"
#include "workloads/synth/Synthesizer.h"
#include "workloads/synth/TraceModel.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>

namespace etsim::workloads::synth {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path writeSource(const Workload& workload, const fs::path& folder)
{
    WriteOptions options;
    options.folder = folder;
    options.name = "src";
    return writeWorkload(workload, options).prefix;
}

TransformerModel smallModel()
{
    TransformerModel m;
    m.layers = 2;
    m.hidden = 512;
    m.heads = 8;
    m.ffn = 2048;
    m.vocab = 8000;
    return m;
}

TransformerSpec transformer(uint32_t tp, uint32_t pp, uint32_t dp, uint32_t experts = 0)
{
    TransformerSpec spec;
    spec.model = smallModel();
    spec.model.experts = experts;
    spec.model.topK = experts > 0 ? 2 : 1;
    spec.parallel.tp = tp;
    spec.parallel.pp = pp;
    spec.parallel.dp = dp;
    spec.parallel.ep = experts > 0 ? 2 : 1;
    spec.seqLen = 256;
    spec.microBatch = 1;
    spec.globalBatch = dp * 4;
    return spec;
}

struct Source {
    std::string name;
    std::unique_ptr<Workload> workload;
};

std::vector<Source> sources()
{
    std::vector<Source> list;
    list.push_back({"tp2-dp2", std::make_unique<Transformer>(transformer(2, 1, 2))});
    list.push_back({"tp2-pp2-dp2", std::make_unique<Transformer>(transformer(2, 2, 2))});
    list.push_back({"moe-ep2-dp4", std::make_unique<Transformer>(transformer(1, 1, 4, 4))});
    MicrobenchSpec bench;
    bench.ranks = 8;
    bench.groupSize = 4;
    bench.layout = GroupLayout::Strided;
    bench.collective = et::CollectiveType::AllGather;
    bench.iterations = 20;
    bench.computeFlops = 1 << 30;
    list.push_back({"allgather-strided", std::make_unique<Microbench>(bench)});
    MicrobenchSpec ring = bench;
    ring.pattern = P2pPattern::Ring;
    list.push_back({"p2p-ring", std::make_unique<Microbench>(ring)});
    return list;
}

TEST(Synth, TracesFromModelsOfSeveralWorkloadsValidateClean)
{
    for (const Source& source : sources()) {
        etsim::test::TempDir dir;
        fs::path prefix = writeSource(*source.workload, dir.path() / "src");
        TraceModel model = learnModel({prefix});
        for (uint32_t ranks : {source.workload->rankCount(), 16U, 1U}) {
            SynthSpec spec;
            spec.ranks = ranks;
            spec.nodes = 600;
            spec.seed = 11;
            Synthesizer synth(model, spec);
            EXPECT_EQ(synth.nodesPerRank(), 600U) << source.name;
            et::ValidationReport report =
                test::writeAndValidate(synth, dir.path() / ("out" + std::to_string(ranks)));
            EXPECT_EQ(report.errors, 0U) << source.name << " ranks " << ranks << "\n"
                                         << test::findingsText(report);
            EXPECT_EQ(report.warnings, 0U) << source.name << " ranks " << ranks << "\n"
                                           << test::findingsText(report);
            EXPECT_EQ(report.ranks, ranks);
        }
    }
}

TEST(Synth, PointToPointAndGroupsKeepTheirShape)
{
    etsim::test::TempDir dir;
    std::vector<Source> list = sources();
    TraceModel ring = learnModel({writeSource(*list[4].workload, dir.path() / "ring")});
    ASSERT_EQ(ring.kinds.count("send"), 1U);
    // A ring inside strided groups of 4 out of 8: the next member is 2 ranks on (mod 8).
    EXPECT_EQ(ring.kinds.at("send").peerOffsets, (Categorical{{"+2", 20 * 8}}));
    EXPECT_EQ(ring.kinds.at("recv").peerOffsets, (Categorical{{"-2", 20 * 8}}));
    TraceModel gather = learnModel({writeSource(*list[3].workload, dir.path() / "gather")});
    EXPECT_EQ(gather.kinds.at("coll.all_gather").groups, (Categorical{{"4x2", 20 * 8}}));

    SynthSpec spec;
    spec.ranks = 8;
    spec.nodes = 100;
    Synthesizer synth(gather, spec);
    std::vector<CommGroup> groups = synth.groupsOf(5);
    ASSERT_EQ(groups.size(), 1U);
    EXPECT_EQ(groups[0].ranks, (std::vector<int64_t>{1, 3, 5, 7}));
    test::MemorySink sink = test::generateAll(synth);
    std::vector<test::Message> sends;
    std::vector<test::Message> recvs;
    test::messages(sink, sends, recvs);
    EXPECT_EQ(sends, recvs);
}

TEST(Synth, StatisticsMatchTheModelWithinTolerances)
{
    etsim::test::TempDir dir;
    fs::path prefix = writeSource(Transformer(transformer(2, 2, 2)), dir.path() / "src");
    TraceModel model = learnModel({prefix});
    SynthSpec spec;
    spec.ranks = 8;
    spec.nodes = 4000;
    spec.seed = 3;
    Synthesizer synth(model, spec);
    WriteOptions options;
    options.folder = dir.path() / "out";
    options.name = "syn";
    TraceModel again = learnModel({writeWorkload(synth, options).prefix});
    Comparison c = compareModels(model, again);
    // Tolerances stated in docs/synth.md.
    EXPECT_LT(c.kindMix, 0.05);
    EXPECT_LT(c.collectiveMix, 0.05);
    EXPECT_LT(c.bigramMix, 0.08);
    for (const DistributionDistance& d : c.distributions) {
        if (d.countA < 50 || d.countB < 50)
            continue;
        bool deps = d.quantity.rfind("dep_", 0) == 0;
        double limit = deps ? 0.15 : 0.10;
        EXPECT_LT(d.ks, limit) << d.kind << " " << d.quantity;
        if (!deps) {
            EXPECT_NEAR(d.meanB, d.meanA, 0.15 * d.meanA) << d.kind << " " << d.quantity;
        }
    }
    EXPECT_NEAR(again.nodesPerRank(), 4000.0, 1.0);
}

std::vector<std::string> fileBytes(const fs::path& folder)
{
    std::vector<std::string> all;
    for (uint32_t rank = 0; rank < 4; ++rank)
        all.push_back(etsim::test::readFile(folder / ("job." + std::to_string(rank) + ".et")));
    return all;
}

TEST(Synth, SameSeedSameBytesOtherSeedOtherTrace)
{
    etsim::test::TempDir dir;
    TraceModel model =
        learnModel({writeSource(Transformer(transformer(2, 1, 2)), dir.path() / "src")});
    auto write = [&](uint64_t seed, const std::string& folder) {
        SynthSpec spec;
        spec.ranks = 4;
        spec.nodes = 300;
        spec.seed = seed;
        WriteOptions options;
        options.folder = dir.path() / folder;
        options.name = "job";
        writeWorkload(Synthesizer(model, spec), options);
        return fileBytes(options.folder);
    };
    EXPECT_EQ(write(5, "a"), write(5, "b"));
    EXPECT_NE(write(5, "a"), write(6, "c"));
}

TEST(Synth, NamesAndShapesAreNotKept)
{
    etsim::test::TempDir dir;
    fs::path prefix = writeSource(Transformer(transformer(2, 1, 2)), dir.path() / "src");
    std::set<std::string> original;
    std::set<std::array<int64_t, 4>> originalShapes;
    auto shapeOf = [](const et::TraceNode& node) {
        return std::array<int64_t, 4>{node.gemmM().value_or(0),
                                      node.gemmN().value_or(0),
                                      node.gemmK().value_or(0),
                                      node.gemmBatch().value_or(1)};
    };
    {
        et::TraceReader reader(fs::path(prefix.string() + ".0.et"));
        et::TraceNode node;
        while (reader.next(node)) {
            original.insert(node.name);
            if (node.gemmM())
                originalShapes.insert(shapeOf(node));
        }
    }
    ASSERT_GE(originalShapes.size(), 5U);
    std::size_t shaped = 0;
    ASSERT_GT(original.count("fwd.mb0.layer0.qkv"), 0U);
    SynthSpec spec;
    spec.ranks = 4;
    spec.nodes = 500;
    test::MemorySink sink = test::generateAll(Synthesizer(learnModel({prefix}), spec));
    std::regex obfuscated("op_[0-9]+|## process_group:init ##");
    for (const auto& [rank, nodes] : sink.ranks) {
        for (const et::TraceNode& node : nodes) {
            EXPECT_TRUE(std::regex_match(node.name, obfuscated)) << node.name;
            EXPECT_EQ(original.count(node.name) > 0, node.name == "## process_group:init ##");
            // Shapes are written as quarter-octave classes shrunk by 1/64: never an original.
            if (node.gemmM()) {
                ++shaped;
                std::array<int64_t, 4> shape = shapeOf(node);
                EXPECT_EQ(originalShapes.count(shape), 0U)
                    << shape[0] << "x" << shape[1] << "x" << shape[2] << "x" << shape[3];
                EXPECT_NE(shape[0] % 64, 0) << shape[0];
            }
            EXPECT_EQ(node.otherAttributeCount(), 0U);
        }
    }
    EXPECT_GT(shaped, 100U);
}

TEST(Synth, GemmClassesRoundToQuarterOctavesAndShrink)
{
    EXPECT_EQ(gemmClassOf(512, 1536, 1024, 1), "36,42,40,0");
    EXPECT_EQ(gemmClassOf(0, 1, 2, 8), "0,0,4,12");
    std::array<int64_t, 4> shape = gemmOfClass("36,42,40,0");
    // 512 and 1024 shrink by 1/64; 1536 falls in the 2^10.5 = 1448 class.
    EXPECT_EQ(shape, (std::array<int64_t, 4>{504, 1425, 1008, 1}));
    EXPECT_EQ(gemmOfClass("0,0,0,12"), (std::array<int64_t, 4>{1, 1, 1, 8}));
    EXPECT_EQ(gemmClassWeight("36,42,40,0"), 118);
    EXPECT_THROW(
        {
            try {
                gemmOfClass("1,2,3");
            } catch (const Error& error) {
                EXPECT_NE(
                    std::string(error.what()).find("GEMM class \"1,2,3\": expected four exponents"),
                    std::string::npos)
                    << error.what();
                throw;
            }
        },
        Error);
}

TEST(Synth, BinMeansKeepARareLargeValue)
{
    // 31 small values and one large one: the top bin holds mostly the large one, so draws
    // there must be large, and the mean must survive.
    std::vector<double> samples(31, 1.0e6);
    samples.push_back(1.6e8);
    Quantiles sketch = Quantiles::fromSamples(samples);
    ASSERT_EQ(sketch.means().size(), static_cast<std::size_t>(Quantiles::bins));
    double mean = (31 * 1.0e6 + 1.6e8) / 32;
    EXPECT_NEAR(sketch.mean(), mean, 0.05 * mean);
    EXPECT_GT(sketch.sample(0.99), 1.0e8);
    EXPECT_DOUBLE_EQ(sketch.sample(0.5), 1.0e6);
    // Without bin means (older models) the top bin is log-interpolated and the mean is lost.
    Quantiles old = Quantiles::fromValues(sketch.count(), sketch.values());
    EXPECT_LT(old.mean(), 0.5 * mean);
}

TEST(Synth, StrataMeansAddUpToTheMean)
{
    std::vector<double> samples(31, 1.0e6);
    samples.push_back(1.6e8);
    Quantiles sketch = Quantiles::fromSamples(samples);
    Quantiles old = Quantiles::fromValues(sketch.count(), sketch.values());
    for (const Quantiles* q : {&sketch, &old}) {
        EXPECT_NEAR(q->meanBetween(0.0, 1.0), q->mean(), 1e-3 * q->mean());
        for (int n : {1, 7, 32, 55}) {
            double sum = 0;
            for (int j = 0; j < n; ++j) {
                double from = static_cast<double>(j) / n;
                double to = static_cast<double>(j + 1) / n;
                double value = q->meanBetween(from, to);
                // Within the stratum's quantiles, so n such values keep the CDF within 1/n.
                EXPECT_GE(value, q->sample(from) * (1 - 1e-9)) << n << " " << j;
                EXPECT_LE(value, q->sample(std::nextafter(to, 0.0)) * (1 + 1e-9)) << n << " " << j;
                sum += value;
            }
            EXPECT_NEAR(sum / n, q->mean(), 2e-3 * q->mean()) << n;
        }
    }
    // With bin means the top stratum of 55 is large (the data's one value of 1.6e8).
    EXPECT_GT(sketch.meanBetween(54.0 / 55, 1.0), 1.0e8);
    EXPECT_DOUBLE_EQ(sketch.meanBetween(0.25, 0.25), sketch.sample(0.25));
    EXPECT_DOUBLE_EQ(Quantiles().meanBetween(0.0, 1.0), 0.0);
}

// Heavy-tailed sizes (one large optimizer step and gradient all-reduce per rank among many
// small nodes): whatever the seed, each kind's total work is its node count times the model's
// mean, and the GEMM shape classes come out in the model's proportions.
TEST(Synth, TotalWorkPerKindDoesNotDependOnTheSeed)
{
    etsim::test::TempDir dir;
    TraceModel model =
        learnModel({writeSource(Transformer(transformer(2, 1, 2)), dir.path() / "src")});
    std::map<std::string, double> first;
    std::map<std::string, uint64_t> firstShapes;
    for (uint64_t seed = 1; seed <= 6; ++seed) {
        SynthSpec spec;
        spec.ranks = 4;
        spec.seed = seed;
        Synthesizer synth(model, spec);
        test::MemorySink sink = test::generateAll(synth);
        std::map<std::string, double> work;
        std::map<std::string, uint64_t> nodes;
        std::map<std::string, uint64_t> shapes;
        for (const et::TraceNode& node : sink.ranks.at(0)) {
            std::string kind;
            if (node.commSize()) {
                kind = "coll";
                work[kind] += static_cast<double>(*node.commSize());
            } else if (node.opKind()) {
                kind = "comp." + std::string(*node.opKind());
                work[kind] += static_cast<double>(node.tensorSize().value_or(0)) +
                              static_cast<double>(node.numOps().value_or(0));
                if (node.gemmM())
                    ++shapes[std::to_string(*node.gemmM()) + "x" +
                             std::to_string(node.gemmN().value_or(0)) + "x" +
                             std::to_string(node.gemmK().value_or(0))];
            } else {
                continue;
            }
            ++nodes[kind];
        }
        auto expected = [&](const std::string& kind, Quantity q) {
            auto stats = model.kinds.find(kind);
            return stats == model.kinds.end() ? 0.0 : stats->second.quantity(q).mean();
        };
        for (const auto& [kind, sum] : work) {
            double n = static_cast<double>(nodes[kind]);
            double mean = kind == "coll" ? expected("coll.all_reduce", Quantity::CommSize)
                                         : expected(kind, Quantity::TensorSize) +
                                               expected(kind, Quantity::NumOps);
            EXPECT_NEAR(sum, n * mean, 0.01 * n * mean) << kind << " seed " << seed;
            if (seed == 1)
                first[kind] = sum;
            else
                EXPECT_NEAR(sum, first[kind], 0.01 * first[kind]) << kind << " seed " << seed;
        }
        if (seed == 1)
            firstShapes = shapes;
        else
            EXPECT_EQ(shapes, firstShapes) << "seed " << seed;
    }
    EXPECT_GE(first.size(), 4U);
    EXPECT_GE(firstShapes.size(), 4U);
}

TEST(Synth, ModelRoundTripsThroughJson)
{
    etsim::test::TempDir dir;
    TraceModel model =
        learnModel({writeSource(Transformer(transformer(2, 2, 2)), dir.path() / "src")}, {3});
    EXPECT_EQ(model.order, 3);
    EXPECT_EQ(model.source.ranks, 8U);
    EXPECT_EQ(model.source.maxRanks, 8U);
    // The process-group METADATA_NODE of each rank is not modelled.
    EXPECT_EQ(model.source.ignoredNodes, 8U);
    saveModel(model, dir.file("m.json"));
    TraceModel loaded = loadModel(dir.file("m.json"));
    EXPECT_EQ(modelToJson(loaded), modelToJson(model));
    EXPECT_EQ(modelToJson(model)["format"], "etsim-synth-model");
    EXPECT_EQ(modelToJson(model)["version"], 1);
}

// A valid model file's JSON, for the mutation cases below.
// A valid kinds.<kind>.tensors for a kind of at least one node: one node reading two tensors
// (one fresh, one another node's output 1 back) and writing one.
json validTensors()
{
    json distance = {{"count", 1}, {"quantiles", json::array()}};
    for (int i = 0; i < 33; ++i)
        distance["quantiles"].push_back(1);
    return {{"inputs", {{"2", 1}}},
            {"outputs", {{"1", 1}}},
            {"source", {{"0:output", 1}, {"1:fresh", 1}}},
            {"distance", distance}};
}

json validModel()
{
    etsim::test::TempDir dir;
    MicrobenchSpec bench;
    bench.ranks = 4;
    bench.computeFlops = 1 << 20;
    bench.iterations = 4;
    return json::parse(
        modelToJson(learnModel({writeSource(Microbench(bench), dir.path())})).dump());
}

TEST(Synth, BadModelErrorsNameTheField)
{
    json good = validModel();
    ASSERT_TRUE(good["kinds"].contains("comp.gemm")) << good.dump();
    struct Case {
        std::function<void(json&)> change;
        std::string message;
    };
    std::vector<Case> cases = {
        {[](json& m) { m["format"] = "other"; },
         "m.json: format: is \"other\", expected \"etsim-synth-model\""},
        {[](json& m) { m["version"] = 2; }, "m.json: version: is 2; this etsim reads version 1"},
        {[](json& m) { m.erase("order"); }, "m.json: order: missing; an integer >= 0 is required"},
        {[](json& m) { m["order"] = 9; }, "m.json: order: is 9, use 1..8"},
        {[](json& m) { m["order"] = "2"; }, "m.json: order: is string, expected an integer >= 0"},
        {[](json& m) { m["kinds"]["comp.matmul"] = m["kinds"]["comp.gemm"]; },
         "m.json: kinds.comp.matmul: unknown node kind"},
        {[](json& m) { m["kinds"]["comp.gemm"]["count"] = -1; },
         "m.json: kinds.comp.gemm.count: is number, expected an integer >= 0"},
        {[](json& m) { m["kinds"]["comp.gemm"]["num_ops"]["quantiles"][3] = 0.5; },
         "m.json: kinds.comp.gemm.num_ops.quantiles[3]: is below the quantile before it"},
        {[](json& m) {
             m["kinds"]["comp.gemm"]["num_ops"]["quantiles"] = {1, 2, 3, 4, 5};
         },
         "m.json: kinds.comp.gemm.num_ops.quantiles: has 5 values, expected 33"},
        {[](json& m) { m["kinds"]["comp.gemm"]["num_ops"]["quantiles"][0] = -1; },
         "m.json: kinds.comp.gemm.num_ops.quantiles[0]: is -1, must be a finite number >= 0"},
        {[](json& m) { m["kinds"]["comp.gemm"]["num_ops"]["count"] = 1000000; },
         "m.json: kinds.comp.gemm.num_ops.count: is above the kind's count"},
        {[](json& m) { m["kinds"]["comp.gemm"]["dtype"]["fp12"] = 1; },
         "m.json: kinds.comp.gemm.dtype.fp12: unknown element type"},
        {[](json& m) { m["kinds"]["comp.gemm"]["deps"]["count"]["x"] = 1; },
         "m.json: kinds.comp.gemm.deps.count.x: must be a dependency count 0..16"},
        {[](json& m) {
             m["kinds"]["comp.gemm"]["num_ops"]["means"] = {1, 2};
         },
         "m.json: kinds.comp.gemm.num_ops.means: has 2 values, expected 32"},
        {[](json& m) { m["kinds"]["comp.gemm"]["num_ops"]["means"][0] = -1; },
         "m.json: kinds.comp.gemm.num_ops.means[0]: is -1, must lie between quantiles[0] and "
         "quantiles[1]"},
        {[](json& m) { m["kinds"]["comp.gemm"]["gemm_class"]["1,2"] = 1; },
         "m.json: kinds.comp.gemm.gemm_class.1,2: must be four exponents"},
        {[](json& m) {
             m["kinds"]["comp.gemm"]["gemm_class"] = {{"1,2,3,0", 1000000}};
         },
         "m.json: kinds.comp.gemm.gemm_class: counts more nodes than the kind's count"},
        {[](json& m) {
             m["kinds"]["coll.all_reduce"]["gemm_class"] = {{"1,2,3,0", 1}};
         },
         "m.json: kinds.coll.all_reduce.gemm_class: is only for comp.gemm"},
        {[](json& m) {
             m["kinds"]["coll.all_reduce"]["group_mean_size"] = {{"9x9", 1}};
         },
         "m.json: kinds.coll.all_reduce.group_mean_size.9x9: is not a shape in group"},
        {[](json& m) {
             json& sizes = m["kinds"]["coll.all_reduce"]["group_mean_size"];
             sizes[sizes.begin().key()] = -3;
         },
         "m.json: kinds.coll.all_reduce.group_mean_size.all: is -3, must be a finite number of "
         "bytes >= 0"},
        {[](json& m) { m["kinds"]["coll.all_reduce"]["group"]["ring"] = 1; },
         "m.json: kinds.coll.all_reduce.group.ring: must be \"all\" or \"<size>x<stride>\""},
        {[](json& m) { m["ngrams"][""]["coll.barrier"] = 1; },
         "m.json: ngrams[\"\"].coll.barrier: next kind is not in kinds"},
        {[](json& m) { m["ngrams"]["send"] = json::object(); },
         "m.json: ngrams[\"send\"]: context names \"send\", which is not in kinds"},
        {[](json& m) { m["ngrams"].erase(""); },
         "m.json: ngrams[\"\"]: missing or empty; the unigram counts are required"},
        {[](json& m) { m = json::array(); }, "m.json: (top level): is array, expected an object"},
        {[](json& m) { m["kinds"]["coll.all_reduce"]["tensors"] = json::object(); },
         "m.json: kinds.coll.all_reduce.tensors: is only for compute and memory kinds"},
        {[](json& m) { m["kinds"]["comp.gemm"]["tensors"] = validTensors(); }, "(no error)"},
        {[](json& m) {
             m["kinds"]["comp.gemm"]["tensors"] = validTensors();
             m["kinds"]["comp.gemm"]["tensors"]["inputs"]["x"] = 1;
         },
         "m.json: kinds.comp.gemm.tensors.inputs.x: must be a tensor count 0..16"},
        {[](json& m) {
             m["kinds"]["comp.gemm"]["tensors"] = validTensors();
             m["kinds"]["comp.gemm"]["tensors"]["outputs"]["1"] = 2;
         },
         "m.json: kinds.comp.gemm.tensors.outputs: counts 2 nodes but inputs counts 1"},
        {[](json& m) {
             m["kinds"]["comp.gemm"]["tensors"] = validTensors();
             m["kinds"]["comp.gemm"]["tensors"]["source"]["0:weights"] = 1;
         },
         "m.json: kinds.comp.gemm.tensors.source.0:weights: must be \"<input position "
         "0..15>:<fresh, "
         "output or input>\""},
        {[](json& m) {
             m["kinds"]["comp.gemm"]["tensors"] = validTensors();
             m["kinds"]["comp.gemm"]["tensors"]["source"]["1:fresh"] = 5;
         },
         "m.json: kinds.comp.gemm.tensors.source: counts 6 inputs, more than the 2 that inputs "
         "gives"},
        {[](json& m) {
             m["kinds"]["comp.gemm"]["tensors"] = validTensors();
             m["kinds"]["comp.gemm"]["tensors"].erase("distance");
         },
         "m.json: kinds.comp.gemm.tensors.distance: missing, but source has reused inputs"},
        {[](json& m) {
             m["kinds"]["comp.gemm"]["tensors"] = validTensors();
             m["kinds"]["comp.gemm"]["tensors"]["distance"]["quantiles"][0] = 0;
         },
         "m.json: kinds.comp.gemm.tensors.distance.quantiles[0]: is below 1"},
    };
    for (const Case& c : cases) {
        json model = good;
        c.change(model);
        std::string error = etsim::test::errorOf([&] { modelFromJson(model, "m.json"); });
        EXPECT_EQ(error.substr(0, c.message.size()), c.message) << error;
    }
    EXPECT_NO_THROW(modelFromJson(good, "m.json"));
}

// A compute node of `bytes` reading `inputs` and writing `outputs` (tensor ids, 1 KiB each).
et::TraceNode
tensorNode(uint64_t id, const std::vector<uint64_t>& inputs, const std::vector<uint64_t>& outputs)
{
    et::TraceNode node;
    node.id = id;
    node.name = "n" + std::to_string(id);
    node.type = et::NodeType::Comp;
    node.setOpKind("gemm");
    node.setNumOps(1000);
    node.setTensorSize(1024 * (inputs.size() + outputs.size()));
    std::vector<TensorUse> in;
    std::vector<TensorUse> out;
    for (uint64_t t : inputs)
        in.push_back({t, 1024});
    for (uint64_t t : outputs)
        out.push_back({t, 1024});
    et::setNodeTensors(node, in, out, 2, "Tensor(c10::BFloat16)");
    return node;
}

TEST(Synth, LearnsWhereEachInputTensorWasLastSeen)
{
    // A writes t1 from t0; B reads t1 (A's output, 1 back) and writes t2; C reads t1 (last
    // read by B: an input, 1 back) and t0 (last read by A: an input, 2 back) and writes t3.
    etsim::test::TempDir dir;
    {
        et::TraceWriter writer(dir.path() / "hand.0.et");
        for (const et::TraceNode& node :
             {tensorNode(1, {0}, {1}), tensorNode(2, {1}, {2}), tensorNode(3, {1, 0}, {3})})
            writer.write(node);
        writer.close();
    }
    TraceModel model = learnModel({dir.path() / "hand"});
    const KindStats& gemm = model.kinds.at("comp.gemm");
    EXPECT_EQ(gemm.tensorInputs, (Categorical{{"1", 2}, {"2", 1}}));
    EXPECT_EQ(gemm.tensorOutputs, (Categorical{{"1", 3}}));
    EXPECT_EQ(gemm.inputSources,
              (Categorical{{"0:fresh", 1}, {"0:output", 1}, {"0:input", 1}, {"1:input", 1}}));
    ASSERT_EQ(gemm.reuseDistance.count(), 3U);
    EXPECT_EQ(gemm.reuseDistance.values().front(), 1.0);
    EXPECT_EQ(gemm.reuseDistance.values().back(), 2.0);
    // Written and read back, the statistics are the same.
    TraceModel again = modelFromJson(json::parse(modelToJson(model).dump()), "m.json");
    EXPECT_EQ(again.kinds.at("comp.gemm").inputSources, gemm.inputSources);
    EXPECT_EQ(again.kinds.at("comp.gemm").reuseDistance.values(), gemm.reuseDistance.values());
}

TEST(Synth, TensorReuseSurvivesSynthesis)
{
    etsim::test::TempDir dir;
    TraceModel model =
        learnModel({writeSource(Transformer(transformer(2, 1, 2)), dir.path() / "src")});
    auto reusedShare = [](const KindStats& kind) {
        uint64_t all = total(kind.inputSources);
        uint64_t fresh = 0;
        for (const auto& [key, count] : kind.inputSources)
            if (key.find(":fresh") != std::string::npos)
                fresh += count;
        return static_cast<double>(all - fresh) / static_cast<double>(all);
    };
    const KindStats& learned = model.kinds.at("comp.gemm");
    ASSERT_GT(total(learned.tensorInputs), 0U);
    const double share = reusedShare(learned);
    ASSERT_GT(share, 0.2);
    ASSERT_LT(share, 0.8);

    SynthSpec spec;
    spec.ranks = 2;
    spec.nodes = 4000;
    WriteOptions options;
    options.folder = dir.path() / "syn";
    options.name = "syn";
    const fs::path synthetic = writeWorkload(Synthesizer(model, spec), options).prefix;
    // Every synthetic compute node that carries a tensor_size names tensors in the model's
    // share, and an input reused from an earlier node has that node's tensor size.
    TraceModel relearned = learnModel({synthetic});
    const KindStats& gemm = relearned.kinds.at("comp.gemm");
    const double named =
        static_cast<double>(total(gemm.tensorInputs)) / static_cast<double>(gemm.count);
    const double learnedNamed =
        static_cast<double>(total(learned.tensorInputs)) / static_cast<double>(learned.count);
    EXPECT_NEAR(named, learnedNamed, 0.05);
    EXPECT_NEAR(reusedShare(gemm), share, 0.08);
    std::map<uint64_t, uint64_t> bytesOf;
    uint64_t reused = 0;
    et::TraceReader reader(fs::path(synthetic.string() + ".0.et"));
    et::TraceNode node;
    while (reader.next(node))
        if (std::optional<NodeTensors> tensors = et::nodeTensors(node)) {
            for (const TensorUse& input : tensors->inputs) {
                auto [at, fresh] = bytesOf.emplace(input.id, input.bytes);
                if (!fresh) {
                    ++reused;
                    EXPECT_EQ(at->second, input.bytes) << "tensor " << input.id;
                }
            }
            for (const TensorUse& output : tensors->outputs)
                EXPECT_TRUE(bytesOf.emplace(output.id, output.bytes).second)
                    << "tensor " << output.id << " written twice";
        }
    EXPECT_GT(reused, 100U);
}

TEST(Synth, CorruptModelFilesAreRejectedClearly)
{
    etsim::test::TempDir dir;
    std::string text = validModel().dump();
    std::vector<std::pair<std::string, std::string>> cases = {
        {"", "not valid JSON at byte 1"},
        {text.substr(0, text.size() / 2), "not valid JSON at byte"},
        {"{\"format\": \"etsim-synth-model\",}", "not valid JSON at byte 32"},
        {std::string("\x1f\x8b\x08\x00", 4), "not valid JSON at byte 1"},
        {"{\"format\": 1e999}",
         "not valid JSON ([json.exception.out_of_range.406] number overflow"},
        {"[1, 2, 3]", "(top level): is array, expected an object"},
        {"{\"format\": \"etsim-synth-model\", \"version\": 1}", "order: missing"},
    };
    for (const auto& [contents, message] : cases) {
        fs::path file = dir.write("bad.json", contents);
        std::string error = etsim::test::errorOf([&] { loadModel(file); });
        EXPECT_NE(error.find(file.string() + ": "), std::string::npos) << error;
        EXPECT_NE(error.find(message), std::string::npos) << error;
    }
    EXPECT_EQ(etsim::test::errorOf([&] { loadModel(dir.file("none.json")); }),
              dir.file("none.json").string() + ": cannot open: No such file or directory");
}

TEST(Synth, LearnAndSynthErrors)
{
    etsim::test::TempDir dir;
    EXPECT_EQ(etsim::test::errorOf([&] { learnModel({dir.path()}, {0}); }),
              "n-gram order 0: use 1..8 (2: the next kind depends on the last one)");
    EXPECT_EQ(etsim::test::errorOf([&] { learnModel({}); }),
              "no trace to learn from: give at least one prefix, folder or rank file");
    EXPECT_NE(etsim::test::errorOf([&] { learnModel({dir.file("missing")}); }).find("missing"),
              std::string::npos);
    TraceModel model = modelFromJson(validModel(), "m.json");
    SynthSpec spec;
    spec.ranks = 0;
    EXPECT_EQ(etsim::test::errorOf([&] { Synthesizer(model, spec); }),
              "--ranks 0: a trace needs at least one rank");
}

TEST(Synth, DistributionDistancesByHand)
{
    Quantiles a = Quantiles::fromSamples({1, 2, 3, 4});
    EXPECT_EQ(a.count(), 4U);
    EXPECT_DOUBLE_EQ(a.values().front(), 1.0);
    EXPECT_DOUBLE_EQ(a.values()[16], 2.5);
    EXPECT_DOUBLE_EQ(a.values().back(), 4.0);
    EXPECT_DOUBLE_EQ(a.sample(0.0), 1.0);
    EXPECT_NEAR(a.sample(0.5), 2.5, 1e-9);
    EXPECT_DOUBLE_EQ(a.cdf(0.5), 0.0);
    EXPECT_DOUBLE_EQ(a.cdf(4.0), 1.0);
    EXPECT_DOUBLE_EQ(ksDistance(a, a), 0.0);
    EXPECT_DOUBLE_EQ(emdLog10(a, a), 0.0);
    // Ten times larger: one decade apart in log10(1 + x) only approximately (the +1).
    Quantiles big = Quantiles::fromSamples({1000, 2000});
    Quantiles small = Quantiles::fromSamples({100, 200});
    EXPECT_NEAR(emdLog10(big, small), 1.0, 0.01);
    EXPECT_DOUBLE_EQ(ksDistance(big, small), 1.0);
    EXPECT_DOUBLE_EQ(tvDistance({{"a", 1}, {"b", 1}}, {{"a", 2}}), 0.5);
    EXPECT_DOUBLE_EQ(tvDistance({{"a", 1}}, {{"b", 1}}), 1.0);
    EXPECT_EQ(pick({{"a", 1}, {"b", 3}}, 0.2), "a");
    EXPECT_EQ(pick({{"a", 1}, {"b", 3}}, 0.3), "b");
}

} // namespace
} // namespace etsim::workloads::synth
