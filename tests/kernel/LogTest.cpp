#include "kernel/Log.h"

#include "kernel/Error.h"

#include <gtest/gtest.h>

#include <sstream>

namespace etsim {
namespace {

TEST(Log, NothingBelowWarnPrintsByDefault)
{
    std::ostringstream out;
    LogRegistry registry(out);
    Logger& log = registry.get("hbm");
    log.info("hidden");
    log.debug("hidden");
    log.warn("refresh ", 3, " late");
    EXPECT_EQ(out.str(), "[warn] hbm: refresh 3 late\n");
}

TEST(Log, ChildInheritsParentLevelUnlessSetItself)
{
    std::ostringstream out;
    LogRegistry registry(out);
    Logger& channel = registry.get("hbm.channel0");
    registry.configure("error,hbm=debug,hbm.channel1=off");
    Logger& other = registry.get("hbm.channel1");
    Logger& net = registry.get("net");
    EXPECT_EQ(channel.level(), LogLevel::Debug);
    EXPECT_EQ(other.level(), LogLevel::Off);
    EXPECT_EQ(net.level(), LogLevel::Error);
    other.error("never");
    channel.debug("row ", 7, " opened");
    EXPECT_EQ(out.str(), "[debug] hbm.channel0: row 7 opened\n");
}

TEST(Log, PrefixOfNameIsNotParent)
{
    LogRegistry registry;
    registry.setLevel("hb", LogLevel::Trace);
    EXPECT_EQ(registry.get("hbm").level(), LogRegistry::defaultLevel);
}

TEST(Log, BadSpecNamesPartAndAllowedLevels)
{
    LogRegistry registry;
    try {
        registry.configure("info,hbm=loud");
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_STREQ(error.what(),
                     "log level \"hbm=loud\": expected LEVEL or LOGGER=LEVEL with LEVEL one of "
                     "trace, debug, info, warn, error, off");
    }
    EXPECT_THROW(registry.configure("=debug"), Error);
}

TEST(Log, LevelNamesRoundTrip)
{
    for (auto level : {LogLevel::Trace,
                       LogLevel::Debug,
                       LogLevel::Info,
                       LogLevel::Warn,
                       LogLevel::Error,
                       LogLevel::Off})
        EXPECT_EQ(parseLogLevel(logLevelName(level)), level);
    EXPECT_FALSE(parseLogLevel("WARN"));
}

} // namespace
} // namespace etsim
