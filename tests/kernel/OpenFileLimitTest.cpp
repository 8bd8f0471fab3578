#include "kernel/OpenFileLimit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sys/resource.h>

namespace etsim {
namespace {

TEST(OpenFileLimit, ReadsTheSoftLimit)
{
    rlimit limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &limit), 0);
    if (limit.rlim_cur == RLIM_INFINITY)
        EXPECT_EQ(openFileLimit(77), 77U);
    else
        EXPECT_EQ(openFileLimit(), static_cast<std::size_t>(limit.rlim_cur));
}

TEST(OpenFileLimit, RaisesTheSoftLimitToTheHardOne)
{
    rlimit before{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &before), 0);
    if (before.rlim_cur == RLIM_INFINITY)
        GTEST_SKIP() << "the soft limit on open files is unlimited already";
    // Lower the soft limit first, so that the raise has something to do whatever the limit
    // this test was started with.
    rlimit lowered = before;
    lowered.rlim_cur = std::min<rlim_t>(before.rlim_cur, 64);
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &lowered), 0);
    ASSERT_EQ(openFileLimit(), 64U);

    std::size_t raised = raiseOpenFileLimit();
    rlim_t expected = std::min<rlim_t>(before.rlim_max, rlim_t{1} << 20);
    EXPECT_EQ(raised, static_cast<std::size_t>(expected));
    EXPECT_EQ(openFileLimit(), raised);
    // A second call changes nothing.
    EXPECT_EQ(raiseOpenFileLimit(), raised);
    ::setrlimit(RLIMIT_NOFILE, &before);
}

} // namespace
} // namespace etsim
