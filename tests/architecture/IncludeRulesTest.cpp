// The include rules of docs/architecture.md, checked on the include lines of every source file
// of the libraries: a layer includes only the layers below it, models never include the trace
// layer or the bridge, and the SystemC-free core (and everything the peer side links) never
// includes SystemC.

#include "tests/architecture/SourceFiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace etsim {
namespace {

namespace fs = std::filesystem;

struct Include {
    std::string file; // relative to the source root, e.g. "models/net/Fabric.cpp"
    int line = 0;
    std::string target; // as written: "kernel/Units.h", "systemc"
};

bool startsWith(const std::string& text, const std::string& prefix)
{
    return text.compare(0, prefix.size(), prefix) == 0;
}

bool startsWithAny(const std::string& text, const std::vector<std::string>& prefixes)
{
    return std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& prefix) {
        return startsWith(text, prefix);
    });
}

// The kernel's SystemC-free core (etsim::core); the rest of kernel/ is the SystemC runtime.
const std::vector<std::string> coreHeaders = {"kernel/AtomicFile.h",
                                              "kernel/Config.h",
                                              "kernel/Error.h",
                                              "kernel/Ids.h",
                                              "kernel/InputFile.h",
                                              "kernel/InputLimits.h",
                                              "kernel/IntMath.h",
                                              "kernel/Log.h",
                                              "kernel/NodeInfo.h",
                                              "kernel/ParamTable.h",
                                              "kernel/Stats.h",
                                              "kernel/StopRequest.h",
                                              "kernel/Timeline.h",
                                              "kernel/Units.h",
                                              "kernel/Utf8.h"};

bool isCoreFile(const std::string& file)
{
    if (!startsWith(file, "kernel/"))
        return false;
    const std::string stem = file.substr(0, file.rfind('.'));
    return std::any_of(coreHeaders.begin(), coreHeaders.end(), [&](const std::string& header) {
        return header.substr(0, header.rfind('.')) == stem;
    });
}

bool isSystemC(const std::string& target)
{
    return target == "systemc" || target == "systemc.h" || target == "tlm" || target == "tlm.h" ||
           startsWith(target, "tlm_utils/") || startsWith(target, "sysc/") ||
           startsWith(target, "tlm_core/");
}

// The fabric's topology and routing code and its configuration: SystemC-free, read by peers.
bool isTopologyFile(const std::string& file)
{
    return startsWith(file, "models/net/topology/") || startsWith(file, "models/net/NetConfig.");
}

// Code the peer side (an external simulator) links: no SystemC, no kernel runtime.
bool isPeerSide(const std::string& file)
{
    return startsWithAny(
        file, {"cosim/wire/", "cosim/sync/", "cosim/transport/", "cosim/peer/", "cosim/adapters/"});
}

// Every rule an include breaks, as "file:line: includes X: why".
std::vector<std::string> violations(const std::vector<Include>& includes)
{
    std::vector<std::string> found;
    for (const Include& include : includes) {
        const std::string& file = include.file;
        const std::string& target = include.target;
        auto report = [&](const std::string& why) {
            found.push_back(file + ":" + std::to_string(include.line) + ": includes " + target +
                            ": " + why);
        };
        const bool etsimHeader = startsWithAny(target,
                                               {"kernel/",
                                                "models/",
                                                "et_driver/",
                                                "importers/",
                                                "cosim/",
                                                "workloads/",
                                                "platforms/",
                                                "apps/"});
        if (startsWith(file, "kernel/") && etsimHeader && !startsWith(target, "kernel/"))
            report("kernel/ includes nothing else of etsim");
        if (isCoreFile(file) || isTopologyFile(file) || isPeerSide(file)) {
            if (isSystemC(target))
                report("the SystemC-free core, the topology code and the peer side never "
                       "include SystemC");
            if (startsWith(target, "kernel/") &&
                std::find(coreHeaders.begin(), coreHeaders.end(), target) == coreHeaders.end())
                report("only the kernel's core headers are SystemC-free (" + target +
                       " is the SystemC runtime)");
        }
        if (isTopologyFile(file) && startsWith(target, "models/") && !isTopologyFile(target))
            report("topology and routing code includes only itself and NetConfig.h");
        if (isPeerSide(file) && startsWith(target, "models/") && !isTopologyFile(target))
            report("the peer side may use only the fabric's topology code of models/");
        if (startsWith(file, "models/") &&
            startsWithAny(
                target,
                {"et_driver/", "importers/", "cosim/", "platforms/", "apps/", "workloads/"}))
            report("models never include the trace layer, the bridge or anything above");
        if (startsWith(file, "et_driver/") &&
            startsWithAny(target, {"models/", "cosim/", "platforms/", "apps/", "workloads/"}))
            report("et_driver/ knows the trace, not the hardware");
        if (startsWith(file, "cosim/") && !startsWith(file, "cosim/adapters/") &&
            startsWithAny(target, {"models/", "et_driver/", "platforms/", "apps/", "workloads/"}))
            report("the bridge includes only kernel/ and itself");
        if (startsWith(file, "importers/") &&
            startsWithAny(target, {"models/", "cosim/", "platforms/", "apps/", "workloads/"}))
            report("importers know traces, not hardware: they write through et_driver/ only");
        if (startsWith(file, "workloads/") &&
            startsWithAny(target, {"models/", "cosim/", "platforms/", "apps/"}))
            report("workloads write traces through et_driver/ only");
        if (startsWith(file, "platforms/") && startsWith(target, "apps/"))
            report("platforms/ never includes the command");
    }
    return found;
}

std::vector<Include> readIncludes(const fs::path& root, const std::vector<std::string>& folders)
{
    static const std::regex includeLine(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
    std::vector<Include> includes;
    for (const std::string& file : test::sourceFiles(root, folders)) {
        std::ifstream in(root / file);
        std::string text;
        int number = 0;
        while (std::getline(in, text)) {
            ++number;
            std::smatch match;
            if (std::regex_search(text, match, includeLine))
                includes.push_back({file, number, match[1].str()});
        }
    }
    return includes;
}

TEST(IncludeRules, EveryLibrarySourceFileKeepsThem)
{
    const char* root = std::getenv("ETSIM_SOURCE_DIR");
    ASSERT_NE(root, nullptr) << "run through ctest, which sets ETSIM_SOURCE_DIR";
    const std::vector<Include> includes = readIncludes(
        root, {"kernel", "models", "et_driver", "importers", "cosim", "workloads", "platforms"});
    // The walk found the tree (a wrong root would pass vacuously).
    ASSERT_GT(includes.size(), 500U);
    std::string all;
    for (const std::string& problem : violations(includes))
        all += problem + "\n";
    EXPECT_EQ(all, "");
}

TEST(IncludeRules, EachRuleCatchesItsViolation)
{
    const std::vector<Include> bad = {
        {"kernel/Units.h", 3, "systemc"},
        {"kernel/Stats.cpp", 4, "kernel/Simulation.h"},
        {"kernel/Log.cpp", 5, "models/net/Fabric.h"},
        {"models/hbm/HbmController.cpp", 6, "et_driver/TraceNode.h"},
        {"models/net/topology/MultiDimTopology.cpp", 7, "models/net/flow/NetworkCore.h"},
        {"cosim/peer/PeerSession.cpp", 8, "tlm"},
        {"cosim/adapters/ns3/Ns3Main.cpp", 9, "models/net/Fabric.h"},
        {"et_driver/RankDriver.cpp", 10, "cosim/Proxy.h"},
        {"cosim/Proxy.cpp", 11, "models/net/NetConfig.h"},
        {"workloads/Transformer.cpp", 12, "platforms/Job.h"},
        {"platforms/Job.cpp", 13, "apps/RunCommand.h"},
        {"importers/pytorch/RankGraph.cpp", 14, "models/net/Fabric.h"},
        {"kernel/AtomicFile.cpp", 15, "kernel/Simulation.h"},
    };
    std::vector<std::string> found = violations(bad);
    EXPECT_EQ(found.size(), bad.size());
    for (const Include& include : bad)
        EXPECT_TRUE(std::any_of(
            found.begin(),
            found.end(),
            [&](const std::string& problem) {
                return startsWith(problem, include.file + ":" + std::to_string(include.line) + ":");
            }))
            << include.file << " includes " << include.target;

    const std::vector<Include> good = {
        {"kernel/Simulation.cpp", 1, "systemc"},
        {"kernel/Units.cpp", 2, "kernel/Error.h"},
        {"models/net/Fabric.cpp", 3, "kernel/ScTime.h"},
        {"cosim/adapters/ns3/FabricDescription.cpp", 4, "models/net/topology/TopologyFactory.h"},
        {"cosim/peer/PeerSession.cpp", 5, "kernel/Error.h"},
        {"platforms/Job.cpp", 6, "models/net/Fabric.h"},
        {"importers/pytorch/RankGraph.cpp", 7, "et_driver/TraceWriter.h"},
        {"kernel/StopRequest.cpp", 8, "kernel/StopRequest.h"},
        {"platforms/collectives/Foo.cpp", 9, "models/net/NetConfig.h"},
    };
    EXPECT_EQ(violations(good), std::vector<std::string>{});
}

} // namespace
} // namespace etsim
