// `etsim gen ...` as a user runs it: exit codes, --help defaults, --list, files written.

#include "et_driver/TraceValidator.h"
#include "tests/support/RunCommand.h"
#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

namespace etsim::et {
namespace {

using test::contains;
using test::runEtsim;
namespace fs = std::filesystem;

using Result = test::CommandResult;

TEST(GenCommands, HelpShowsEveryDefault)
{
    Result help = runEtsim("gen transformer --help");
    EXPECT_EQ(help.code, 0);
    for (const char* line : {"--layers UINT=2",
                             "--hidden UINT=1024",
                             "--tp UINT=1",
                             "--ep UINT=1",
                             "--phase TEXT=training",
                             "--dtype TEXT=bf16",
                             "--recompute TEXT=none",
                             "--zero UINT=0",
                             "--offload TEXT=none",
                             "--name TEXT=transformer",
                             "--gzip"})
        EXPECT_TRUE(contains(help.output, line)) << line << "\n" << help.output;
    Result micro = runEtsim("gen microbench --help");
    EXPECT_EQ(micro.code, 0);
    EXPECT_TRUE(contains(micro.output, "--size TEXT=1 MiB")) << micro.output;
    EXPECT_TRUE(contains(micro.output, "--ranks UINT=8")) << micro.output;
}

TEST(GenCommands, ListShowsThePresets)
{
    for (const char* command : {"gen --list", "gen transformer --list"}) {
        Result list = runEtsim(command);
        EXPECT_EQ(list.code, 0) << command;
        EXPECT_TRUE(contains(list.output, "gpt3-175b")) << list.output;
        EXPECT_TRUE(contains(list.output, "llama3-70b")) << list.output;
        EXPECT_TRUE(contains(list.output, "mixtral-8x7b")) << list.output;
    }
}

// `etsim collective verify` reads algorithm traces with as many threads as --threads says and
// prints the same whatever the number; the XML form too, as generated.
TEST(GenCommands, CollectiveProgramsVerifyWithAnyNumberOfThreads)
{
    etsim::test::TempDir dir;
    std::string prefix = dir.path().string() + "/ring";
    ASSERT_EQ(runEtsim("gen collective --ranks 16 --format chakra --out '" + prefix + "'").code, 0);
    ASSERT_EQ(runEtsim("gen collective --ranks 16 --out '" + prefix + ".xml'").code, 0);
    Result one = runEtsim("collective verify --threads 1 '" + prefix + "'");
    EXPECT_EQ(one.code, 0) << one.output;
    EXPECT_TRUE(contains(one.output, "16 ranks, 496 operations, 480 messages: verified"))
        << one.output;
    for (const char* threads : {"2", "7"}) {
        Result more =
            runEtsim(std::string("collective verify --threads ") + threads + " '" + prefix + "'");
        EXPECT_EQ(more.code, 0) << more.output;
        EXPECT_EQ(more.output, one.output);
    }
    Result xml = runEtsim("collective verify '" + prefix + ".xml'");
    EXPECT_EQ(xml.code, 0) << xml.output;
    EXPECT_TRUE(contains(xml.output, "16 ranks, 496 operations, 480 messages: verified"))
        << xml.output;
    Result zero = runEtsim("collective verify --threads 0 '" + prefix + "'");
    EXPECT_EQ(zero.code, 2);
    EXPECT_TRUE(contains(zero.output, "--threads")) << zero.output;
    EXPECT_TRUE(
        contains(runEtsim("collective verify --help").output, "--threads UINT:UINT in [1 - 64]"))
        << runEtsim("collective verify --help").output;
}

TEST(GenCommands, WritesTracesThatValidate)
{
    etsim::test::TempDir dir;
    Result micro = runEtsim("gen microbench --ranks 8 --group-size 4 --collective reduce_scatter "
                            "--size '64 KiB' --iterations 2 --out '" +
                            dir.path().string() + "/mb'");
    EXPECT_EQ(micro.code, 0) << micro.output;
    EXPECT_TRUE(contains(micro.output, "wrote 8 rank files")) << micro.output;
    EXPECT_TRUE(fs::exists(dir.path() / "mb" / "microbench.7.et"));
    EXPECT_TRUE(fs::exists(dir.path() / "mb" / "microbench.comm_groups.json"));
    EXPECT_TRUE(TraceValidator().validate(dir.path() / "mb" / "microbench").ok());

    Result tf =
        runEtsim("gen transformer --preset llama3-8b --layers 2 --seq-len 128 --tp 2 --pp 2 "
                 "--dp 2 --global-batch 4 --recompute full --attention unfused --dropout 0.1 "
                 "--gzip --name llama --out '" +
                 dir.path().string() + "/tf'");
    EXPECT_EQ(tf.code, 0) << tf.output;
    EXPECT_TRUE(contains(tf.output, "with full recomputation")) << tf.output;
    EXPECT_TRUE(contains(tf.output, "16 x layers x seq x hidden x tokens (attention, unfused)"))
        << tf.output;
    EXPECT_TRUE(contains(tf.output, "closed form: ")) << tf.output;
    EXPECT_TRUE(contains(tf.output, "fp32 gradients")) << tf.output;
    EXPECT_TRUE(fs::exists(dir.path() / "tf" / "llama.7.et.gz"));
    Result validate = runEtsim("trace validate '" + dir.path().string() + "/tf/llama'");
    EXPECT_EQ(validate.code, 0) << validate.output;
}

TEST(GenCommands, CannotStartExitsTwo)
{
    etsim::test::TempDir dir;
    std::string out = " --out '" + dir.path().string() + "'";
    struct Case {
        std::string arguments;
        std::string message;
    };
    for (const Case& c : {
             Case{"gen", "give a subcommand: microbench, transformer, learn, synth or compare"},
             Case{"gen microbench", "--out FOLDER is required"},
             Case{"gen transformer", "--out FOLDER is required"},
             Case{"gen transformer --preset gpt5" + out, "unknown --preset gpt5"},
             Case{"gen transformer --tp 3" + out, "heads, for tp 3, (16) must be a multiple of 3"},
             Case{"gen transformer --phase serve" + out,
                  "--phase serve: use training or inference"},
             Case{"gen transformer --recompute some" + out,
                  "--recompute some: use none, selective or full"},
             Case{"gen transformer --offload kv" + out, "--offload kv: use none, weights"},
             Case{"gen transformer --dtype fp13" + out, "--dtype fp13: use fp32"},
             Case{"gen transformer --attention flash" + out,
                  "--attention flash: use fused or unfused"},
             Case{"gen transformer --dropout 1" + out, "dropout must be a probability in [0, 1)"},
             Case{"gen transformer --grad-accumulation hook" + out,
                  "--grad-accumulation hook: use none or separate"},
             Case{"gen transformer --grad-dtype fp13" + out, "--grad-dtype fp13: use fp32"},
             Case{"gen transformer --phase inference --grad-dtype fp32" + out,
                  "grad-dtype applies to training"},
             Case{"gen microbench --collective allsum" + out,
                  "--collective allsum: use all_reduce"},
             Case{"gen microbench --pattern mesh" + out, "--pattern mesh: use ring or pairwise"},
             Case{"gen microbench --group-layout diagonal" + out, "use contiguous or strided"},
             Case{"gen microbench --size 12parsecs" + out, "--size: "},
             Case{"gen microbench --dtype fp13" + out, "--dtype fp13"},
             Case{"gen microbench --ranks 6 --group-size 4" + out, "must divide the rank count 6"},
             Case{"gen microbench --out /proc/etsim-gen", "cannot create the output folder"},
             Case{"gen microbench --bogus" + out, "bogus"},
         }) {
        Result r = runEtsim(c.arguments);
        EXPECT_EQ(r.code, 2) << c.arguments << "\n" << r.output;
        EXPECT_TRUE(contains(r.output, c.message)) << c.arguments << "\n" << r.output;
    }
}

} // namespace
} // namespace etsim::et
