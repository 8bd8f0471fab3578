#pragma once
// The value of one statistic of a group, for tests that check a model's counters.

#include "kernel/Stats.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim::test {

/// A counter's or scalar's value at `path` under `stats`; a test failure and -1 when there is
/// none of either kind.
inline double statValue(const StatGroup& stats, const std::string& path)
{
    const Stat* found = stats.findStat(path);
    EXPECT_NE(found, nullptr) << path;
    if (const auto* counter = dynamic_cast<const Counter*>(found))
        return static_cast<double>(counter->value());
    if (const auto* scalar = dynamic_cast<const Scalar*>(found))
        return scalar->value();
    return -1.0;
}

} // namespace etsim::test
