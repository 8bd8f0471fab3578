// The MSCCL reader's refusals, each with its whole message: the file, the line of the element,
// the element and what is wrong. The programs are written out here so that every line number
// can be checked by eye.

#include "platforms/collectives/MscclReader.h"

#include "kernel/Error.h"
#include "platforms/collectives/ProgramGen.h"
#include "tests/support/ErrorOf.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace etsim::platform {
namespace {

// A two-rank ring all-reduce (each rank sends its chunk, receives and adds the other's, passes
// the sum back): line 1 <algo>, line 2 <gpu 0>, line 3 <tb>, lines 4-6 its steps, line 7
// </tb>, line 9 <gpu 1>, ...
std::string pair(const std::string& algo = "",
                 const std::string& gpu0 = "",
                 const std::string& tb0 = "",
                 const std::string& step1 = "",
                 const std::string& gpu1 = "")
{
    const char* rest = R"( dstbuf="o" dstoff="0" cnt="1" depid="-1" deps="-1" hasdep="0"/>)";
    return R"(<algo name="pair" proto="Simple" nchannels="1" nchunksperloop="2" ngpus="2" )"
           R"(coll="allreduce" inplace="0")" +
           algo + ">\n" + R"(  <gpu id="0" i_chunks="2" o_chunks="2" s_chunks="0")" + gpu0 + ">\n" +
           R"(    <tb id="0" send="1" recv="1" chan="0")" + tb0 + ">\n" +
           R"(      <step s="0" type="s" srcbuf="i" srcoff="1")" + rest + "\n" +
           R"(      <step s="1" type="rrc" srcbuf="i" srcoff="0")" + step1 + rest + "\n" +
           R"(      <step s="2" type="r" srcbuf="i" srcoff="1")" + rest + "\n" +
           "    </tb>\n  </gpu>\n" + R"(  <gpu id="1" i_chunks="2" o_chunks="2" s_chunks="0")" +
           gpu1 + ">\n" + R"(    <tb id="0" send="0" recv="0" chan="0">)" + "\n" +
           R"(      <step s="0" type="s" srcbuf="i" srcoff="0")" + rest + "\n" +
           R"(      <step s="1" type="rrc" srcbuf="i" srcoff="1")" + rest + "\n" +
           R"(      <step s="2" type="r" srcbuf="i" srcoff="0")" + rest + "\n" +
           "    </tb>\n  </gpu>\n</algo>\n";
}

std::string replaced(std::string text, const std::string& from, const std::string& to)
{
    std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

std::string refusal(const std::string& xml)
{
    return test::errorOf([&] { parseMsccl(xml, "pair.xml"); });
}

TEST(MscclReaderErrors, TheProgramItselfIsRead)
{
    net::CollectiveProgram program = parseMsccl(pair(), "pair.xml");
    ASSERT_EQ(program.rankCount(), 2U);
    EXPECT_EQ(program.name, "pair");
    EXPECT_EQ(program.inputChunks, 2U);
    ASSERT_EQ(program.ranks[1].ops.size(), 3U);
    const net::ProgramOp& op = program.ranks[1].ops[1];
    EXPECT_EQ(op.kind, net::ProgramOpKind::RecvReduceCopy);
    EXPECT_EQ(op.src.offset, 1U);
    EXPECT_EQ(op.recvPeer, 0U);
    EXPECT_EQ(program.where(1, 1), "pair.xml:12 (gpu 1 tb 0 step 1 rrc)");
    ASSERT_EQ(op.deps.size(), 1U);
    EXPECT_EQ(op.deps[0], 0U);
}

TEST(MscclReaderErrors, TheDocumentAndItsRoot)
{
    EXPECT_EQ(refusal(""), "pair.xml:1: malformed XML: Document is empty");
    // The file is read as it streams: a problem of the program comes before one of the XML
    // found further on (here the missing </gpu> at the end).
    EXPECT_EQ(refusal(replaced(pair(), "</tb>\n  </gpu>\n  <gpu", "</tb>\n  <gpu")),
              "pair.xml:8: <gpu>: unexpected element inside <gpu> (expected <tb>)");
    EXPECT_EQ(refusal(replaced(pair(), "</tb>", "</block>")),
              "pair.xml:7: malformed XML: Opening and ending tag mismatch: tb line 3 and block");
    EXPECT_EQ(refusal("<program/>"),
              "pair.xml:1: <program>: the root element must be <algo> (an MSCCL program)");
    EXPECT_EQ(refusal(pair(" loop=\"1\"")),
              "pair.xml:1: <algo>: the attribute loop is not modelled (known: coll, inplace, "
              "maxBytes, minBytes, name, nchannels, nchunksperloop, ngpus, outofplace, proto, "
              "redop)");
    EXPECT_EQ(refusal(replaced(pair(), "coll=\"allreduce\"", "coll=\"broadcast\"")),
              "pair.xml:1: <algo>: coll=\"broadcast\" is not modelled (allreduce, allgather, "
              "reduce_scatter or alltoall)");
    EXPECT_EQ(refusal(replaced(pair(), "coll=\"allreduce\"", "")),
              "pair.xml:1: <algo>: needs the attribute coll");
    EXPECT_EQ(refusal(replaced(pair(), "ngpus=\"2\"", "ngpus=\"two\"")),
              "pair.xml:1: <algo>: ngpus=\"two\" is not an integer");
    EXPECT_EQ(refusal(replaced(pair(), "ngpus=\"2\"", "ngpus=\"1\"")),
              "pair.xml:1: <algo>: ngpus=1 is out of range (2 to 65536)");
    EXPECT_EQ(refusal(replaced(pair(), "ngpus=\"2\"", "ngpus=\"3\"")),
              "pair.xml:1: <algo>: ngpus=3 but the program has 2 <gpu> elements");
    EXPECT_EQ(refusal(replaced(pair(), "</algo>", "  <gpu id=\"0\"><tb/></gpu>\n</algo>")),
              "pair.xml:1: <algo>: ngpus=2 but the program has 3 <gpu> elements");
    EXPECT_EQ(refusal(replaced(pair(), "nchunksperloop=\"2\"", "nchunksperloop=\"0\"")),
              "pair.xml:1: <algo>: nchunksperloop=0 is out of range (1 to 16777216)");
    EXPECT_EQ(refusal(replaced(pair(), "inplace=\"0\"", "inplace=\"2\"")),
              "pair.xml:1: <algo>: inplace=2 is out of range (0 to 1)");
    EXPECT_EQ(refusal(replaced(pair(), "  <gpu id=\"1\"", "  <node/>\n  <gpu id=\"1\"")),
              "pair.xml:9: <node>: unexpected element inside <algo> (expected <gpu>)");
}

TEST(MscclReaderErrors, Gpus)
{
    EXPECT_EQ(refusal(pair("", " rank=\"0\"")),
              "pair.xml:2: <gpu>: the attribute rank is not modelled (known: i_chunks, id, "
              "o_chunks, s_chunks)");
    EXPECT_EQ(refusal(replaced(pair(), "<gpu id=\"1\"", "<gpu id=\"2\"")),
              "pair.xml:9: <gpu>: id=2 is out of range (0 to 1)");
    EXPECT_EQ(refusal(replaced(pair(), "<gpu id=\"1\"", "<gpu id=\"0\"")),
              "pair.xml:9: <gpu>: gpu id 0 appears twice");
    EXPECT_EQ(refusal(replaced(pair(), "<gpu id=\"0\" i_chunks=\"2\"", "<gpu id=\"0\"")),
              "pair.xml:2: <gpu>: needs the attribute i_chunks");
    EXPECT_EQ(
        refusal(replaced(pair(), "<gpu id=\"1\" i_chunks=\"2\"", "<gpu id=\"1\" i_chunks=\"3\"")),
        "pair.xml:9: <gpu>: i_chunks=3 o_chunks=2 differ from the first gpu's (2, 2); "
        "every rank must have the same buffers");
    std::string empty =
        replaced(pair(), "<gpu id=\"0\" i_chunks=\"2\"", "<gpu id=\"0\" i_chunks=\"0\"");
    EXPECT_EQ(refusal(empty), "pair.xml:2: <gpu>: i_chunks must be at least 1");
    EXPECT_EQ(refusal(replaced(pair(),
                               "    <tb id=\"0\" send=\"0\"",
                               "    <block/>\n    <tb id=\"0\" send=\"0\"")),
              "pair.xml:10: <block>: unexpected element inside <gpu> (expected <tb>)");
}

TEST(MscclReaderErrors, Threadblocks)
{
    EXPECT_EQ(refusal(pair("", "", " proto=\"LL\"")),
              "pair.xml:3: <tb>: the attribute proto is not modelled (known: chan, id, recv, "
              "send)");
    EXPECT_EQ(refusal(replaced(pair(), "send=\"1\" recv=\"1\"", "send=\"2\" recv=\"1\"")),
              "pair.xml:3: <tb>: send=2 is out of range (-1 to 1)");
    EXPECT_EQ(refusal(replaced(pair(), "send=\"1\" recv=\"1\"", "send=\"1\" recv=\"x\"")),
              "pair.xml:3: <tb>: recv=\"x\" is not an integer");
    std::string second = R"(    <tb id="0" send="-1" recv="-1" chan="0">
    </tb>
  </gpu>
  <gpu id="1")";
    EXPECT_EQ(refusal(replaced(pair(), "  </gpu>\n  <gpu id=\"1\"", second)),
              "pair.xml:8: <tb>: threadblock id 0 appears twice in gpu 0");
    std::string sends = R"(    <tb id="1" send="1" recv="-1" chan="0">
    </tb>
  </gpu>
  <gpu id="1")";
    EXPECT_EQ(refusal(replaced(pair(), "  </gpu>\n  <gpu id=\"1\"", sends)),
              "pair.xml:8: <tb>: a second threadblock of gpu 0 sends to gpu 1 on channel 0 (the "
              "order of their messages would be undefined; use another channel)");
    std::string receives = R"(    <tb id="1" send="-1" recv="1" chan="0">
    </tb>
  </gpu>
  <gpu id="1")";
    EXPECT_EQ(refusal(replaced(pair(), "  </gpu>\n  <gpu id=\"1\"", receives)),
              "pair.xml:8: <tb>: a second threadblock of gpu 0 receives from gpu 1 on channel 0 "
              "(use another channel)");
    // On another channel the second threadblock is accepted.
    EXPECT_EQ(refusal(replaced(pair(),
                               "  </gpu>\n  <gpu id=\"1\"",
                               replaced(receives, "chan=\"0\"", "chan=\"1\""))),
              "(no error)");
    EXPECT_EQ(refusal(replaced(pair(),
                               "      <step s=\"1\" type=\"rrc\"",
                               "      <op/>\n      <step s=\"1\" type=\"rrc\"")),
              "pair.xml:5: <op>: unexpected element inside <tb> (expected <step>)");
}

TEST(MscclReaderErrors, Steps)
{
    // Changes the second step of gpu 0 (line 5).
    auto step = [](const std::string& from, const std::string& to) {
        const std::string line = R"(<step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="o" )"
                                 R"(dstoff="0" cnt="1" depid="-1" deps="-1")";
        return refusal(replaced(pair(), line, replaced(line, from, to)));
    };
    EXPECT_EQ(refusal(pair("", "", "", " loop=\"2\"")),
              "pair.xml:5: <step>: the attribute loop is not modelled (known: cnt, depid, deps, "
              "dstbuf, dstoff, hasdep, s, srcbuf, srcoff, type)");
    EXPECT_EQ(step("s=\"1\"", "s=\"2\""),
              "pair.xml:5: <step>: s=2 but the threadblock's steps must be numbered 0, 1, 2, ... "
              "in order (expected 1)");
    EXPECT_EQ(step("type=\"rrc\"", "type=\"rrx\""),
              "pair.xml:5: <step>: unknown step type \"rrx\" (s, r, rrc, rrs, rcs, rrcs, cpy, re, "
              "nop)");
    EXPECT_EQ(step("srcbuf=\"i\"", "srcbuf=\"x\""),
              "pair.xml:5: <step>: srcbuf=\"x\" is not a buffer (i, o or s)");
    EXPECT_EQ(step("srcoff=\"0\"", "srcoff=\"-1\""),
              "pair.xml:5: <step>: srcoff=-1 is out of range (0 to 16777216)");
    EXPECT_EQ(step("srcoff=\"0\"", "srcoff=\"0x1\""),
              "pair.xml:5: <step>: srcoff=\"0x1\" is not an integer");
    EXPECT_EQ(step("srcoff=\"0\"", "srcoff=\"99999999999999999999\""),
              "pair.xml:5: <step>: srcoff=\"99999999999999999999\" is not an integer");
    EXPECT_EQ(step(" srcoff=\"0\"", ""), "pair.xml:5: <step>: needs the attribute srcoff");
    EXPECT_EQ(step("cnt=\"1\"", "cnt=\"0\""),
              "pair.xml:5: <step>: cnt=0 is out of range (1 to 16777216)");
    EXPECT_EQ(step("depid=\"-1\"", "depid=\"0\""),
              "pair.xml:5: <step>: depid and deps must both be -1 or both name a step");
    EXPECT_EQ(step("depid=\"-1\" deps=\"-1\"", "depid=\"0\" deps=\"5\""),
              "pair.xml:5: <step>: depid=0 deps=5 names no step of gpu 0");
    EXPECT_EQ(step("depid=\"-1\" deps=\"-1\"", "depid=\"3\" deps=\"0\""),
              "pair.xml:5: <step>: depid=3 deps=0 names no step of gpu 0");
    EXPECT_EQ(refusal(replaced(pair(), "send=\"1\" recv=\"1\"", "send=\"-1\" recv=\"1\"")),
              "pair.xml:4: <step>: step type s sends, but its threadblock has send=\"-1\"");
    EXPECT_EQ(refusal(replaced(pair(), "send=\"1\" recv=\"1\"", "send=\"1\" recv=\"-1\"")),
              "pair.xml:5: <step>: step type rrc receives, but its threadblock has recv=\"-1\"");
}

TEST(MscclReaderErrors, WhatTheReaderAcceptsAsBefore)
{
    // Leading blanks and a plus sign are read as a number (std::stoll's rules).
    net::CollectiveProgram program =
        parseMsccl(replaced(pair(), "srcoff=\"1\"", "srcoff=\" +1\""), "pair.xml");
    EXPECT_EQ(program.ranks[0].ops[0].src.offset, 1U);
    // Character references and the document's own entities are replaced in attribute values.
    std::string entities = "<!DOCTYPE algo [<!ENTITY one \"1\">]>\n" +
                           replaced(pair(), "srcoff=\"1\"", "srcoff=\"&#49;\"");
    EXPECT_EQ(parseMsccl(entities, "pair.xml").ranks[0].ops[0].src.offset, 1U);
    // Elements inside a step, comments and text are not read.
    std::string extras =
        replaced(pair(), "<step s=\"0\" type=\"s\"", "<!-- first -->text<step s=\"0\" type=\"s\"");
    EXPECT_EQ(parseMsccl(extras, "pair.xml").ranks[0].ops.size(), 3U);
    // An entity's elements stay out of the program.
    std::string element = "<!DOCTYPE algo [<!ENTITY g \"<gpu id='7'/>\">]>\n" +
                          replaced(pair(), "</algo>", "&g;</algo>");
    EXPECT_EQ(parseMsccl(element, "pair.xml").rankCount(), 2U);
    // Lines count in the DOCTYPE's lines too.
    EXPECT_EQ(refusal("<!DOCTYPE algo>\n\n" + pair(" loop=\"1\"")).substr(0, 20),
              "pair.xml:3: <algo>: ");
}

// Both readers give the same program, operation by operation (the line of each included).
void expectSamePrograms(const net::CollectiveProgram& a, const net::CollectiveProgram& b)
{
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.source, b.source);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.inputChunks, b.inputChunks);
    EXPECT_EQ(a.outputChunks, b.outputChunks);
    EXPECT_EQ(a.scratchChunks, b.scratchChunks);
    EXPECT_EQ(a.chunksPerLoop, b.chunksPerLoop);
    EXPECT_EQ(a.inPlace, b.inPlace);
    EXPECT_EQ(a.origin, b.origin);
    ASSERT_EQ(a.rankCount(), b.rankCount());
    for (std::uint32_t rank = 0; rank < a.rankCount(); ++rank) {
        ASSERT_EQ(a.ranks[rank].ops.size(), b.ranks[rank].ops.size()) << "rank " << rank;
        for (std::size_t index = 0; index < a.ranks[rank].ops.size(); ++index) {
            const net::ProgramOp& x = a.ranks[rank].ops[index];
            const net::ProgramOp& y = b.ranks[rank].ops[index];
            SCOPED_TRACE("rank " + std::to_string(rank) + " op " + std::to_string(index));
            EXPECT_EQ(x.kind, y.kind);
            EXPECT_EQ(x.sendPeer, y.sendPeer);
            EXPECT_EQ(x.recvPeer, y.recvPeer);
            EXPECT_EQ(x.channel, y.channel);
            EXPECT_EQ(x.threadblock, y.threadblock);
            EXPECT_EQ(x.src.buffer, y.src.buffer);
            EXPECT_EQ(x.src.offset, y.src.offset);
            EXPECT_EQ(x.dst.buffer, y.dst.buffer);
            EXPECT_EQ(x.dst.offset, y.dst.offset);
            EXPECT_EQ(x.count, y.count);
            EXPECT_EQ(std::vector<std::uint32_t>(x.deps.begin(), x.deps.end()),
                      std::vector<std::uint32_t>(y.deps.begin(), y.deps.end()));
            EXPECT_EQ(x.origin, y.origin);
            EXPECT_EQ(x.step, y.step);
        }
    }
}

TEST(MscclSubsetReader, ReadsWrittenProgramsAsLibxml2Does)
{
    std::optional<net::CollectiveProgram> fast = parseMscclSubset(pair(), "pair.xml");
    ASSERT_TRUE(fast.has_value());
    expectSamePrograms(*fast, parseMscclWithLibxml2(pair(), "pair.xml"));
    EXPECT_EQ(fast->where(1, 1), "pair.xml:12 (gpu 1 tb 0 step 1 rrc)");
    // What etsim writes, for every algorithm it writes.
    for (net::AlgorithmKind algorithm : {net::AlgorithmKind::Ring,
                                         net::AlgorithmKind::Direct,
                                         net::AlgorithmKind::HalvingDoubling,
                                         net::AlgorithmKind::DoubleBinaryTree}) {
        std::string xml = writeMsccl(generateProgram(algorithm, CollectiveType::AllReduce, 8));
        fast = parseMscclSubset(xml, "gen.xml");
        ASSERT_TRUE(fast.has_value());
        expectSamePrograms(*fast, parseMscclWithLibxml2(xml, "gen.xml"));
    }
    // Single quotes, blanks around '=', before '>' and in end tags, '>' in a value, steps
    // holding elements, an empty root element's refusal aside: all in the subset.
    std::string variants = replaced(
        replaced(replaced(replaced(pair(), "name=\"pair\"", "name = 'p>air'"), "</tb>", "</tb >"),
                 "chan=\"0\">",
                 "chan=\"0\"\t >"),
        "hasdep=\"0\"/>",
        "hasdep=\"0\"><note a=\"1\" b=\"1\"/></step>");
    fast = parseMscclSubset(variants, "pair.xml");
    ASSERT_TRUE(fast.has_value());
    EXPECT_EQ(fast->name, "p>air");
    expectSamePrograms(*fast, parseMscclWithLibxml2(variants, "pair.xml"));
}

TEST(MscclSubsetReader, HandsOverToLibxml2)
{
    // Each is outside the subset; parseMsccl then reads it with libxml2 alone, from the start.
    const std::string outside[] = {
        "<?xml version=\"1.0\"?>\n" + pair(),
        "<!-- a comment -->\n" + pair(),
        "<!DOCTYPE algo>\n" + pair(),
        replaced(pair(), "srcoff=\"1\"", "srcoff=\"&#49;\""),
        replaced(pair(), "srcoff=\"1\"", "srcoff=\"&quot;1\""),
        replaced(pair(), "\n", "\r\n"),
        replaced(pair(), "<step s=\"0\" type=\"s\"", "text<step s=\"0\" type=\"s\""),
        replaced(pair(), "<step s=\"0\" type=\"s\"", "<![CDATA[x]]><step s=\"0\" type=\"s\""),
        replaced(pair(), "send=\"1\" recv=\"1\"", "send=\"1\"\n recv=\"1\""),
        replaced(pair(), "name=\"pair\"", "name=\"p\xc3\xa4ir\""),
        replaced(pair(), "name=\"pair\"", "name=\"p\tair\""),
        replaced(pair(), "<algo ", "<m:algo xmlns:m=\"urn:x\" "),
        pair() + "<!-- after the root -->\n",
    };
    for (const std::string& text : outside) {
        SCOPED_TRACE(text.substr(0, 60));
        EXPECT_FALSE(parseMscclSubset(text, "pair.xml").has_value());
        net::CollectiveProgram program;
        std::string viaBoth = test::errorOf([&] { program = parseMsccl(text, "pair.xml"); });
        net::CollectiveProgram alone;
        std::string viaLibxml2 =
            test::errorOf([&] { alone = parseMscclWithLibxml2(text, "pair.xml"); });
        EXPECT_EQ(viaBoth, viaLibxml2);
        if (viaLibxml2 == "(no error)")
            expectSamePrograms(program, alone);
    }
    // Refused ones: libxml2's messages (every message comes from one reader).
    const std::string refused[] = {
        replaced(pair(), "cnt=\"1\"", "cnt=\"1\" cnt=\"1\""),
        replaced(pair(), "hasdep=\"0\"/>", "hasdep=\"0\"><note a=\"1\" a=\"2\"/></step>"),
        replaced(pair(), "cnt=\"1\"", "cnt=\"1\"deps=\"-1\""),
        replaced(pair(), "</algo>", "</algo><algo/>"),
        replaced(pair(), "</algo>\n", ""),
        replaced(pair(), "cnt=\"1\"", "cnt=1"),
        replaced(pair(), "<step s=\"2\"", "<step s=\"4\""),
        pair().substr(0, 300),
    };
    for (const std::string& text : refused) {
        SCOPED_TRACE(text.substr(0, 60));
        EXPECT_FALSE(parseMscclSubset(text, "pair.xml").has_value());
        std::string message = refusal(text);
        EXPECT_NE(message, "(no error)");
        EXPECT_EQ(message, test::errorOf([&] { parseMscclWithLibxml2(text, "pair.xml"); }));
    }
    EXPECT_EQ(refusal(replaced(pair(), "cnt=\"1\"", "cnt=\"1\" cnt=\"1\"")),
              "pair.xml:4: malformed XML: Attribute cnt redefined");
}

// A large program read in pieces at once: the same program, and any problem that spans the
// pieces (which no piece sees alone) still handed to libxml2.
TEST(MscclSubsetReader, PiecesReadAtOnceJoinAsOneReaderReads)
{
    std::string xml =
        writeMsccl(generateProgram(net::AlgorithmKind::Ring,
                                   CollectiveType::AllReduce,
                                   64)); // 965 kB: at most 13 pieces of 64 kB from a <gpu>
    EXPECT_EQ(mscclPieces(xml, 1), 1U);
    EXPECT_EQ(mscclPieces(xml, 2), 2U);
    EXPECT_EQ(mscclPieces(xml, 3), 3U);
    EXPECT_EQ(mscclPieces(xml, 64), 13U);
    EXPECT_EQ(mscclPieces(pair(), 2), 1U);
    std::optional<net::CollectiveProgram> alone = parseMscclSubset(xml, "ring.xml", 1);
    ASSERT_TRUE(alone.has_value());
    for (unsigned threads : {2U, 3U, 15U, 64U}) {
        SCOPED_TRACE(threads);
        std::optional<net::CollectiveProgram> pieces = parseMscclSubset(xml, "ring.xml", threads);
        ASSERT_TRUE(pieces.has_value());
        expectSamePrograms(*pieces, *alone);
        expectSamePrograms(parseMsccl(xml, "ring.xml", threads), *alone);
    }
    // Late in the file (another piece than the first gpu's): a gpu id given twice, other
    // buffers, a gpu fewer, a comment. Each is libxml2's to read, with its message.
    std::string lastGpu = "  <gpu id=\"63\"";
    std::size_t last = xml.rfind(lastGpu);
    ASSERT_NE(last, std::string::npos);
    std::size_t lastEnd = xml.find("</gpu>\n", last) + 7;
    std::string withoutLast = xml.substr(0, last) + xml.substr(lastEnd);
    const std::string spanning[] = {
        xml.substr(0, last) + "  <gpu id=\"1\"" + xml.substr(last + lastGpu.size()),
        xml.substr(0, last) + "  <gpu id=\"63\" i_chunks=\"65\"" +
            xml.substr(xml.find(" o_chunks", last)),
        withoutLast,
        xml.substr(0, last) + "<!-- <gpu id=\"63\"> -->\n" + xml.substr(last),
    };
    for (const std::string& text : spanning) {
        for (unsigned threads : {1U, 2U, 7U}) {
            SCOPED_TRACE(threads);
            EXPECT_FALSE(parseMscclSubset(text, "ring.xml", threads).has_value());
            net::CollectiveProgram program;
            std::string message =
                test::errorOf([&] { program = parseMsccl(text, "ring.xml", threads); });
            net::CollectiveProgram reference;
            EXPECT_EQ(message,
                      test::errorOf([&] { reference = parseMscclWithLibxml2(text, "ring.xml"); }));
            if (message == "(no error)")
                expectSamePrograms(program, reference);
        }
    }
    EXPECT_EQ(test::errorOf([&] { parseMsccl(withoutLast, "ring.xml", 7); }),
              "ring.xml:1: <algo>: ngpus=64 but the program has 63 <gpu> elements");
}

TEST(MscclReaderErrors, AFileThatCannotBeOpenedIsNamed)
{
    EXPECT_EQ(test::errorOf([] { loadMsccl("/nonexistent/ring.xml"); }),
              "/nonexistent/ring.xml: cannot open the MSCCL program (check the path; relative "
              "paths are taken from the platform file's folder)");
    std::filesystem::path file = std::filesystem::temp_directory_path() / "etsim-msccl-pair.xml";
    std::ofstream(file) << pair();
    EXPECT_EQ(loadMsccl(file.string()).rankCount(), 2U);
    std::filesystem::remove(file);
}

} // namespace
} // namespace etsim::platform
