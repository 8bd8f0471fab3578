// docs/architecture.md's rule on file length: a source file over 650 lines (about 600 and a
// margin) says at its top why it is long, in a comment that begins "Longer than". Checked on
// every C++ source file of the tree (SourceFiles.h), tests and benchmarks included.

#include "tests/architecture/SourceFiles.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace etsim {
namespace {

namespace fs = std::filesystem;

constexpr int maxLinesWithoutReason = 650;
// The reason must come before the code: within the opening comment lines.
constexpr int reasonWithinLines = 5;

// The problem with one file's text, or "" when it keeps the rule.
std::string lengthProblem(const std::string& name, const std::string& text)
{
    std::istringstream in(text);
    std::string line;
    int lines = 0;
    bool reason = false;
    while (std::getline(in, line)) {
        ++lines;
        if (lines <= reasonWithinLines && line.rfind("// Longer than", 0) == 0)
            reason = true;
    }
    if (lines <= maxLinesWithoutReason || reason)
        return {};
    return name + ": " + std::to_string(lines) + " lines and no \"// Longer than ...\" reason in " +
           "its first " + std::to_string(reasonWithinLines) + " lines; split it along its seams " +
           "or say why it is one file";
}

TEST(FileLength, EverySourceFileOverTheLimitSaysWhy)
{
    const char* root = std::getenv("ETSIM_SOURCE_DIR");
    ASSERT_NE(root, nullptr) << "run through ctest, which sets ETSIM_SOURCE_DIR";
    const std::vector<std::string> files = test::sourceFiles(root,
                                                             {"kernel",
                                                              "models",
                                                              "et_driver",
                                                              "importers",
                                                              "cosim",
                                                              "workloads",
                                                              "platforms",
                                                              "apps",
                                                              "tests",
                                                              "bench",
                                                              "examples"});
    std::string problems;
    for (const std::string& file : files) {
        std::ifstream in(fs::path(root) / file);
        std::stringstream text;
        text << in.rdbuf();
        const std::string problem = lengthProblem(file, text.str());
        if (!problem.empty())
            problems += problem + "\n";
    }
    // The walk found the tree (a wrong root would pass vacuously).
    EXPECT_GT(files.size(), 500U);
    EXPECT_EQ(problems, "");
}

TEST(FileLength, TheRuleCatchesALongFileWithoutReason)
{
    std::string longFile;
    for (int i = 0; i < maxLinesWithoutReason + 1; ++i)
        longFile += "int x" + std::to_string(i) + ";\n";
    EXPECT_NE(lengthProblem("a.cpp", longFile), "");
    EXPECT_EQ(lengthProblem("a.cpp", "// Longer than most files: one table.\n" + longFile), "");
    // A reason buried below the opening lines does not count.
    EXPECT_NE(
        lengthProblem("a.cpp", "#include <x>\n\n\n\n\n// Longer than most files.\n" + longFile),
        "");
    EXPECT_EQ(lengthProblem("a.cpp", "int y;\n"), "");
}

} // namespace
} // namespace etsim
