#include "kernel/HugePages.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

// The tests change the environment of a process that runs one test at a time.
// NOLINTBEGIN(concurrency-mt-unsafe)

namespace etsim {
namespace {

// Sets an environment variable for one test and puts the old value back.
class ScopedVariable {
public:
    ScopedVariable(const char* name, const char* value) : name(name)
    {
        if (const char* old = std::getenv(name))
            before = old;
        if (value != nullptr)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~ScopedVariable()
    {
        if (before)
            ::setenv(name, before->c_str(), 1);
        else
            ::unsetenv(name);
    }
    ScopedVariable(const ScopedVariable&) = delete;
    ScopedVariable& operator=(const ScopedVariable&) = delete;

private:
    const char* name;
    std::optional<std::string> before;
};

TEST(HugePages, TunablesGainHugeTlbOnce)
{
    EXPECT_EQ(tunablesWithHugePages(nullptr), "glibc.malloc.hugetlb=1");
    EXPECT_EQ(tunablesWithHugePages(""), "glibc.malloc.hugetlb=1");
    EXPECT_EQ(tunablesWithHugePages("glibc.malloc.arena_max=2"),
              "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
    // Already set, to anything: the user's choice (or an earlier restart) stands.
    EXPECT_EQ(tunablesWithHugePages("glibc.malloc.hugetlb=0"), std::nullopt);
    EXPECT_EQ(tunablesWithHugePages("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2"),
              std::nullopt);
    // A longer name that only starts like it is another tunable.
    EXPECT_EQ(tunablesWithHugePages("glibc.malloc.hugetlbx=1"),
              "glibc.malloc.hugetlbx=1:glibc.malloc.hugetlb=1");
}

TEST(HugePages, ModeIsTheMarkedWord)
{
    EXPECT_EQ(thpModeOf("always [madvise] never"), "madvise");
    EXPECT_EQ(thpModeOf("[always] madvise never\n"), "always");
    EXPECT_EQ(thpModeOf("always madvise [never]"), "never");
    EXPECT_EQ(thpModeOf(""), "");
    EXPECT_EQ(thpModeOf("always madvise never"), "");
}

TEST(HugePages, StateSaysWhetherMallocAsks)
{
    {
        ScopedVariable tunables("GLIBC_TUNABLES",
                                "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
        EXPECT_EQ(heapHugePagesState(), "asked (glibc.malloc.hugetlb=1)");
    }
    ScopedVariable tunables("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0");
    ScopedVariable optOut(hugePagesVariable, "0");
    const std::string state = heapHugePagesState();
    EXPECT_EQ(state.rfind("asked", 0), std::string::npos) << state;
    EXPECT_TRUE(state == "not asked (ETSIM_HUGE_PAGES=0)" || state.rfind("not available", 0) == 0 ||
                state.rfind("given to every", 0) == 0)
        << state;
}

// Nothing to restart for: the process returns from the call and runs on, its environment
// unchanged.
TEST(HugePages, NoRestartWhenOptedOutOrAlreadySet)
{
    char program[] = "/nonexistent/etsim";
    char* argv[] = {program, nullptr};
    {
        ScopedVariable optOut(hugePagesVariable, "0");
        ScopedVariable tunables("GLIBC_TUNABLES", nullptr);
        restartWithHugePages(argv);
        EXPECT_EQ(std::getenv("GLIBC_TUNABLES"), nullptr);
    }
    ScopedVariable optIn(hugePagesVariable, nullptr);
    ScopedVariable tunables("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0");
    restartWithHugePages(argv);
    EXPECT_STREQ(std::getenv("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=0");
}

} // namespace
} // namespace etsim

// NOLINTEND(concurrency-mt-unsafe)
