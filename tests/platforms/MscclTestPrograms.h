#pragma once
// A small MSCCL program and ways to break it, shared by the verifier's and the readers' tests.

#include "models/net/collectives/ProgramVerifier.h"
#include "platforms/collectives/MscclReader.h"
#include "platforms/collectives/ProgramGen.h"
#include "tests/support/ErrorOf.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace etsim::test {

// Ring all-reduce on 4 ranks as MSCCL XML: gpu r has one threadblock (send r+1, recv r-1)
// with steps 0 s, 1-2 rrs, 3 rrcs, 4-5 rcs, 6 r.
inline std::string ring4()
{
    return platform::writeMsccl(
        platform::generateProgram(net::AlgorithmKind::Ring, CollectiveType::AllReduce, 4));
}

// Replaces the first `from` after `<gpu id="gpu"` in `xml`.
inline std::string
mutate(std::string xml, std::uint32_t gpu, const std::string& from, const std::string& to)
{
    std::size_t at = xml.find("<gpu id=\"" + std::to_string(gpu) + "\"");
    at = xml.find(from, at);
    EXPECT_NE(at, std::string::npos) << from;
    return xml.replace(at, from.size(), to);
}

inline std::string replaceFirst(std::string text, const std::string& from, const std::string& to)
{
    return text.replace(text.find(from), from.size(), to);
}

// The verifier's message for `program`, or "(no error)".
inline std::string verifyError(const net::CollectiveProgram& program)
{
    return errorOf([&] { net::verifyProgram(program); });
}

inline std::string verifyError(const std::string& xml)
{
    return verifyError(platform::parseMsccl(xml, "algo.xml"));
}

// The reader's message for `xml`, or "(no error)".
inline std::string loadError(const std::string& xml)
{
    return errorOf([&] { platform::parseMsccl(xml, "algo.xml"); });
}

} // namespace etsim::test
