// Regression inputs kept from fuzzing (tests/et_driver/corpus/): each must end in a clean
// result or one TraceError, never a crash, hang or other exception.

#include "et_driver/TraceReader.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace etsim::et {
namespace {

TEST(FuzzCorpus, EveryInputEndsCleanlyOrWithTraceError)
{
    std::filesystem::path corpus = ETSIM_ET_CORPUS_DIR;
    std::size_t inputs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(corpus)) {
        if (!entry.is_regular_file() || entry.path().filename() == "README.md")
            continue;
        ++inputs;
        try {
            TraceReader reader(entry.path());
            TraceNode node;
            while (reader.next(node)) {
            }
        } catch (const TraceError&) {
        }
    }
    EXPECT_GE(inputs, 1U) << "corpus folder " << corpus << " holds no input";
}

} // namespace
} // namespace etsim::et
