// The collective verifier: it accepts every program the generator writes, and names the rank,
// chunk and step of each mutation (a dropped send, a wrong peer, a copy for a reduction, a
// receive without a send, a dependency cycle, a reduction twice).

#include "kernel/Error.h"
#include "models/net/collectives/ProgramVerifier.h"
#include "platforms/collectives/MscclReader.h"
#include "platforms/collectives/ProgramGen.h"
#include "tests/platforms/MscclTestPrograms.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace etsim::platform {
namespace {

using net::AlgorithmKind;
using ProgramOpKindForTest = net::ProgramOpKind;
using test::mutate;
using test::ring4;
using test::verifyError;

TEST(CollectiveVerifier, AcceptsEveryGeneratedProgram)
{
    for (AlgorithmKind algorithm :
         {AlgorithmKind::Ring, AlgorithmKind::HalvingDoubling, AlgorithmKind::Direct})
        for (CollectiveType type : {CollectiveType::AllReduce,
                                    CollectiveType::ReduceScatter,
                                    CollectiveType::AllGather,
                                    CollectiveType::AllToAll})
            for (std::uint32_t ranks : {2U, 4U, 8U, 16U, 64U}) {
                if (type == CollectiveType::AllToAll && algorithm != AlgorithmKind::Direct)
                    continue;
                if (ranks > 16 && algorithm != AlgorithmKind::Ring)
                    continue; // the quadratic direct programs stay small to keep the test fast
                SCOPED_TRACE(std::to_string(ranks) + " " + toString(type));
                net::CollectiveProgram program = generateProgram(algorithm, type, ranks);
                net::VerifyResult direct = net::verifyProgram(program);
                EXPECT_TRUE(direct.dataChecked);
                // And the same after a round trip through MSCCL XML.
                net::VerifyResult parsed =
                    net::verifyProgram(parseMsccl(writeMsccl(program), "gen.xml"));
                EXPECT_EQ(parsed.operations, direct.operations);
                EXPECT_EQ(parsed.messages, direct.messages);
            }
    // Ring all-reduce: 2(p - 1) messages per rank.
    EXPECT_EQ(net::verifyProgram(parseMsccl(ring4(), "ring.xml")).messages, 4U * 6U);
}

TEST(CollectiveVerifier, AcceptsEveryDoubleBinaryTreeProgram)
{
    for (std::uint32_t ranks : {2U, 3U, 4U, 5U, 7U, 8U, 13U, 16U, 64U}) {
        SCOPED_TRACE(ranks);
        net::CollectiveProgram program =
            generateProgram(AlgorithmKind::DoubleBinaryTree, CollectiveType::AllReduce, ranks);
        net::VerifyResult direct = net::verifyProgram(program);
        EXPECT_TRUE(direct.dataChecked);
        // Each tree: every rank but the root sends up once and receives once.
        EXPECT_EQ(direct.messages, 4U * (ranks - 1));
        net::VerifyResult parsed = net::verifyProgram(parseMsccl(writeMsccl(program), "dbt.xml"));
        EXPECT_EQ(parsed.operations, direct.operations);
        EXPECT_EQ(parsed.messages, direct.messages);
    }
    EXPECT_THROW(generateProgram(AlgorithmKind::DoubleBinaryTree, CollectiveType::AllGather, 4),
                 Error);
}

TEST(CollectiveVerifier, DoubleBinaryTreeWithoutOneReductionIsCaught)
{
    // Rank 1 (tree 0: child of 0, parent of 3) copies rank 3's half instead of adding it.
    net::CollectiveProgram program =
        generateProgram(AlgorithmKind::DoubleBinaryTree, CollectiveType::AllReduce, 4);
    ASSERT_EQ(program.ranks[1].ops[0].kind, ProgramOpKindForTest::RecvReduceCopy);
    program.ranks[1].ops[0].kind = ProgramOpKindForTest::Recv;
    try {
        net::verifyProgram(program);
        FAIL() << "accepted";
    } catch (const Error& error) {
        std::string text = error.what();
        // Rank 1 passed rank 3's part up in place of its own sum: the root's half 0 lacks
        // rank 1, and the root's reduction of what rank 1 sent is the step named.
        EXPECT_NE(text.find("rank 0, output chunk 0 holds chunk 0 reduced over ranks {0,2-3} "
                            "only (missing {1})"),
                  std::string::npos)
            << text;
        EXPECT_NE(text.find("gpu 0 op 1 (rrc)"), std::string::npos) << text;
    }
}

TEST(CollectiveVerifier, DroppedSendIsADeadlockAtTheReceiverItStarves)
{
    // Without gpu 0's first send, gpu 1 receives one message fewer from it than it expects:
    // its last receive (step 6, chunk (1 - 2) mod 4 = 3) waits forever.
    net::CollectiveProgram program = parseMsccl(ring4(), "algo.xml");
    auto& ops = program.ranks[0].ops;
    ops.erase(ops.begin());
    for (net::ProgramOp& op : ops) {
        op.deps.clear();
    }
    for (std::size_t index = 1; index < ops.size(); ++index)
        ops[index].deps.push_back(static_cast<std::uint32_t>(index - 1));
    std::string error = verifyError(program);
    EXPECT_NE(error.find("(gpu 1 tb 0 step 6 r)"), std::string::npos) << error;
    EXPECT_NE(error.find("deadlock: rank 1 r into input chunk 3"), std::string::npos) << error;
    EXPECT_NE(error.find("rank 0 sends 5 messages to rank 1 on channel 0, which receives 6"),
              std::string::npos)
        << error;
}

TEST(CollectiveVerifier, SendToTheWrongPeerStarvesTheRightOne)
{
    std::string error = verifyError(mutate(ring4(), 0, "send=\"1\"", "send=\"2\""));
    // gpu 1's first receive (step 1 rrs, chunk 0) has no sender any more.
    EXPECT_NE(error.find("algo.xml:"), std::string::npos) << error;
    EXPECT_NE(error.find("(gpu 1 tb 0 step 1 rrs)"), std::string::npos) << error;
    EXPECT_NE(error.find("deadlock: rank 1 rrs into input chunk 0"), std::string::npos) << error;
}

TEST(CollectiveVerifier, ReduceReplacedByCopyLeavesAContributionOut)
{
    // gpu 2 forwards chunk 1 without adding its own part: every rank ends with chunk 1 lacking
    // rank 2. The first rank checked is 0, whose chunk 1 comes from its step 3 (rrcs).
    std::string error = verifyError(mutate(ring4(), 2, "type=\"rrs\"", "type=\"rcs\""));
    EXPECT_NE(error.find("wrong result: rank 0, output chunk 1 holds chunk 1 reduced over ranks "
                         "{0-1,3} only (missing {2})"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("should have produced it: algo.xml:"), std::string::npos) << error;
    EXPECT_NE(error.find("(gpu 0 tb 0 step 3 rrcs)"), std::string::npos) << error;
}

TEST(CollectiveVerifier, ReceiveWithoutSendIsADeadlock)
{
    std::string extra = "<step s=\"7\" type=\"r\" srcbuf=\"i\" srcoff=\"2\" dstbuf=\"i\" "
                        "dstoff=\"2\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/>\n"
                        "    </tb>";
    std::string error = verifyError(mutate(ring4(), 3, "</tb>", extra));
    EXPECT_NE(error.find("(gpu 3 tb 0 step 7 r)"), std::string::npos) << error;
    EXPECT_NE(error.find("deadlock: rank 3 r into input chunk 2"), std::string::npos) << error;
}

TEST(CollectiveVerifier, DependencyCycleIsADeadlock)
{
    // gpu 1's first step waits for its last one.
    std::string error =
        verifyError(mutate(ring4(), 1, "depid=\"-1\" deps=\"-1\"", "depid=\"0\" deps=\"6\""));
    EXPECT_NE(error.find("deadlock: a dependency cycle"), std::string::npos) << error;
    EXPECT_NE(error.find("gpu 1 tb 0 step 0 s"), std::string::npos) << error;
}

TEST(CollectiveVerifier, DoubleReductionIsNamed)
{
    // gpu 0 starts the ring with chunk 1 instead of chunk 0: gpu 1 adds it to its chunk 0.
    net::CollectiveProgram program = parseMsccl(ring4(), "algo.xml");
    program.ranks[0].ops[0].src.offset = 1;
    std::string error = verifyError(program);
    EXPECT_NE(error.find("adds the received chunk 1 to chunk 0"), std::string::npos) << error;
    EXPECT_NE(error.find("(gpu 1 tb 0 step 1 rrs)"), std::string::npos) << error;
}

TEST(CollectiveVerifier, ADependencyCycleIsReportedBeforeADataProblemTheWalkMeetsFirst)
{
    // The double reduction above happens at gpu 1's second step, which the walk reaches; gpu
    // 3 waits for its own last step and never starts. The program's first problem is the cycle.
    net::CollectiveProgram program = parseMsccl(
        mutate(ring4(), 3, "depid=\"-1\" deps=\"-1\"", "depid=\"0\" deps=\"6\""), "algo.xml");
    program.ranks[0].ops[0].src.offset = 1;
    std::string error = verifyError(program);
    EXPECT_NE(error.find("deadlock: a dependency cycle"), std::string::npos) << error;
    EXPECT_NE(error.find("gpu 3 tb 0 step 0 s"), std::string::npos) << error;
    EXPECT_EQ(error.find("adds the received chunk"), std::string::npos) << error;
}

TEST(CollectiveVerifier, ProgramsLongerThanARanksTurnAreWalkedToTheEnd)
{
    // 200 ranks: 398 steps each, several turns of every rank. A reduction turned into a copy
    // late in one rank's program is still found, at the chunk it leaves short.
    net::CollectiveProgram program =
        generateProgram(AlgorithmKind::Ring, CollectiveType::AllReduce, 200);
    EXPECT_TRUE(net::verifyProgram(program).dataChecked);
    // Rank 150's step 150 (rrs) adds its part to chunk (150 - 150) mod 200 = 0 on the way.
    net::ProgramOp& op = program.ranks[150].ops[150];
    ASSERT_EQ(op.kind, ProgramOpKindForTest::RecvReduceSend);
    op.kind = ProgramOpKindForTest::RecvCopySend;
    std::string error = verifyError(program);
    EXPECT_NE(error.find("wrong result: rank 0, output chunk " + std::to_string(op.src.offset) +
                         " holds"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("(missing {150})"), std::string::npos) << error;
}

// An in-place all-gather whose output cannot hold every rank's input once overran the
// verifier's storage (found by the msccl fuzzer; tests/fuzz/regressions/msccl).
TEST(CollectiveVerifier, InPlaceBufferTooSmallForEveryRanksPartIsRefused)
{
    net::CollectiveProgram gather = parseMsccl(ring4(), "algo.xml");
    gather.type = CollectiveType::AllGather;
    gather.inPlace = true;
    ASSERT_EQ(gather.inputChunks, 4U);
    ASSERT_EQ(gather.outputChunks, 4U);
    std::string error;
    try {
        net::verifyProgram(gather);
    } catch (const Error& caught) {
        error = caught.what();
    }
    EXPECT_EQ(error,
              "algo.xml: an in-place all-gather keeps each rank's input at rank × i_chunks of its "
              "output, so o_chunks must be at least 4 × 4 = 16, got 4");
}

} // namespace
} // namespace etsim::platform
