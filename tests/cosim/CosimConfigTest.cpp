// The `cosim:` schema: values with units, defaults, and every error with the file position
// and key path it names.

#include "cosim/CosimConfig.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim::cosim {
namespace {

ProxyOptions parse(const std::string& yaml)
{
    return loadConfigString(yaml, "platform.yaml").map([](ConfigMap& platform) {
        return platform.nested("cosim", parseCosimConfig);
    });
}

std::string errorOf(const std::string& yaml)
{
    try {
        parse(yaml);
    } catch (const Error& error) {
        return error.what();
    }
    return "(no error)";
}

TEST(CosimConfig, ReadsEveryKeyWithUnits)
{
    const ProxyOptions options = parse("cosim:\n"
                                       "  peer: \"tcp:127.0.0.1:5000\"\n"
                                       "  sync: conservative\n"
                                       "  lookahead: 250 ns\n"
                                       "  spawn: \"ns3-fabric --endpoint {endpoint}\"\n"
                                       "  timeout: 2 s\n"
                                       "  token: s3cret\n"
                                       "  channel: 3\n"
                                       "  max_outstanding: 64\n"
                                       "  io: thread\n");
    EXPECT_EQ(options.peer, "tcp:127.0.0.1:5000");
    EXPECT_EQ(options.sync, SyncMode::Conservative);
    EXPECT_EQ(options.lookahead.ps(), 250000u);
    EXPECT_EQ(options.spawn, "ns3-fabric --endpoint {endpoint}");
    EXPECT_FALSE(options.listen);
    EXPECT_EQ(options.timeout.count(), 2000);
    EXPECT_EQ(options.token, "s3cret");
    EXPECT_EQ(options.channel, 3u);
    EXPECT_EQ(options.maxOutstanding, 64u);
    EXPECT_EQ(options.io, IoMode::Thread);
    EXPECT_EQ(options.description, "");
}

TEST(CosimConfig, DefaultsAndTheOtherModes)
{
    const ProxyOptions conservative = parse("cosim: {peer: \"unix:/tmp/p.sock\", lookahead: 1 us}");
    EXPECT_EQ(conservative.sync, SyncMode::Conservative);
    EXPECT_EQ(conservative.lookahead.ps(), 1000000u);
    EXPECT_EQ(conservative.timeout.count(), 10000);
    EXPECT_EQ(conservative.maxOutstanding, ProxyOptions::defaultMaxOutstanding);
    EXPECT_EQ(conservative.channel, 0u);
    EXPECT_EQ(conservative.io, IoMode::Inline);
    EXPECT_TRUE(conservative.token.empty());
    EXPECT_TRUE(conservative.spawn.empty());

    const ProxyOptions loose =
        parse("cosim: {peer: \"shm:/tmp/h.sock\", sync: loosely-timed, quantum: 10 us, "
              "listen: true}");
    EXPECT_EQ(loose.sync, SyncMode::LooselyTimed);
    EXPECT_EQ(loose.quantum.ps(), 10000000u);
    EXPECT_TRUE(loose.listen);

    const ProxyOptions free =
        parse("cosim: {peer: shm, sync: unsynchronised, spawn: \"peer {endpoint}\", "
              "timeout: 1.5 ms}");
    EXPECT_EQ(free.sync, SyncMode::Unsynchronised);
    EXPECT_EQ(free.peer, "shm");
    // Rounded up to whole milliseconds.
    EXPECT_EQ(free.timeout.count(), 2);
}

TEST(CosimConfig, PeerErrors)
{
    EXPECT_EQ(errorOf("cosim: {lookahead: 1 us}\n"),
              "platform.yaml:1:8: cosim.peer: missing required key (where the peer is: "
              "\"unix:/path\", \"tcp:127.0.0.1:PORT\" or \"shm\")");
    EXPECT_EQ(errorOf("cosim: {peer: \"udp:1.2.3.4:5\", lookahead: 1 us}\n"),
              "platform.yaml:1:15: cosim.peer: unknown scheme in \"udp:1.2.3.4:5\" (use "
              "\"unix:/path\", \"tcp:127.0.0.1:PORT\", \"shm\" or \"shm:/path\")");
    EXPECT_EQ(errorOf("cosim: {peer: \"tcp:127.0.0.1:99999\", lookahead: 1 us}\n"),
              "platform.yaml:1:15: cosim.peer: port \"99999\" is not a number from 0 to 65535 in "
              "\"tcp:127.0.0.1:99999\" (use \"unix:/path\", \"tcp:127.0.0.1:PORT\", \"shm\" or "
              "\"shm:/path\")");
    EXPECT_EQ(errorOf("cosim: {peer: shm, lookahead: 1 us}\n"),
              "platform.yaml:1:15: cosim.peer: \"shm\" lets etsim choose the handshake socket, so "
              "it must also start the peer: add spawn, or name the socket with \"shm:/path\"");
}

TEST(CosimConfig, SyncErrors)
{
    const std::string error = errorOf("cosim: {peer: \"unix:/p\", sync: lazy}\n");
    EXPECT_EQ(error.rfind("platform.yaml:1:32: cosim.sync: ", 0), 0u) << error;
    EXPECT_EQ(error,
              "platform.yaml:1:32: cosim.sync: expected one of conservative, loosely-timed, "
              "unsynchronised, got \"lazy\"");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\"}\n"),
              "platform.yaml:1:8: cosim.lookahead: missing required key (the smallest latency "
              "of the component the peer simulates, e.g. 1 us)");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", lookahead: 0 ns}\n"),
              "platform.yaml:1:37: cosim.lookahead: must be greater than zero (the smallest "
              "latency of the component the peer simulates, e.g. 1 us)");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", lookahead: 5 GB/s}\n"),
              "platform.yaml:1:37: cosim.lookahead: \"5 GB/s\" is a bandwidth, a time was "
              "expected");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", lookahead: 1 us, quantum: 1 us}\n"),
              "platform.yaml:1:52: cosim.quantum: applies only to sync: loosely-timed, not to "
              "sync: conservative; remove it");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", sync: loosely-timed}\n"),
              "platform.yaml:1:8: cosim.quantum: missing required key (how far etsim may run "
              "ahead of the peer, e.g. 10 us)");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", sync: loosely-timed, quantum: 0 s}\n"),
              "platform.yaml:1:56: cosim.quantum: must be greater than zero (how far etsim may "
              "run ahead of the peer, e.g. 10 us)");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", sync: loosely-timed, quantum: 1 us, "
                      "lookahead: 1 us}\n"),
              "platform.yaml:1:73: cosim.lookahead: applies only to sync: conservative, not to "
              "sync: loosely-timed; remove it");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", sync: unsynchronised, lookahead: 1 us}\n"),
              "platform.yaml:1:59: cosim.lookahead: applies only to sync: conservative, not to "
              "sync: unsynchronised; remove it");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", sync: unsynchronised, quantum: 1 us}\n"),
              "platform.yaml:1:57: cosim.quantum: applies only to sync: loosely-timed, not to "
              "sync: unsynchronised; remove it");
}

TEST(CosimConfig, OtherErrors)
{
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", lookahead: 1 us, spawn: x, listen: false}\n"),
              "platform.yaml:1:61: cosim.listen: etsim listens for the peer it spawns; remove "
              "listen: false or spawn");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", lookahead: 1 us, timeout: 500 us}\n"),
              "platform.yaml:1:52: cosim.timeout: must be at least 1 ms (a wall-clock limit, "
              "e.g. 2 s)");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", lookahead: 1 us, max_outstanding: 0}\n"),
              "platform.yaml:1:60: cosim.max_outstanding: must be at least 1");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", lookahead: 1 us, channel: -1}\n"),
              "platform.yaml:1:52: cosim.channel: expected an integer from 0 to 4294967295, got "
              "\"-1\"");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", lookahead: 1 us, io: threads}\n"),
              "platform.yaml:1:47: cosim.io: expected one of inline, thread, got \"threads\" "
              "(did you mean \"thread\"?)");
    EXPECT_EQ(errorOf("cosim: {peer: \"unix:/p\", lookahead: 1 us, lookahed: 1 us}\n"),
              "platform.yaml:1:43: cosim.lookahed: unknown key (did you mean \"lookahead\"?)");
}

TEST(CosimConfig, TheEchoHoldsEveryKeyOfTheModeButTheToken)
{
    const ProxyOptions options = parse("cosim: {peer: \"unix:/p\", sync: loosely-timed, "
                                       "quantum: 3 us, timeout: 1.5 ms, token: s3cret}\n");
    const YAML::Node echo = toYaml(options);
    EXPECT_EQ(echo["peer"].as<std::string>(), "unix:/p");
    EXPECT_EQ(echo["sync"].as<std::string>(), "loosely-timed");
    EXPECT_EQ(echo["quantum"].as<std::string>(), "3 us");
    EXPECT_EQ(echo["timeout"].as<std::string>(), "2 ms");
    EXPECT_EQ(echo["max_outstanding"].as<std::string>(), "4096");
    EXPECT_EQ(echo["io"].as<std::string>(), "inline");
    // Only the mode's own time key, and no secret.
    EXPECT_FALSE(echo["lookahead"].IsDefined());
    EXPECT_FALSE(echo["token"].IsDefined());
    // Read back, the echo gives the same options (the token aside).
    YAML::Emitter out;
    out << YAML::Flow << echo;
    const ProxyOptions again = parse("cosim: " + std::string(out.c_str()) + "\n");
    EXPECT_EQ(again.quantum, options.quantum);
    EXPECT_EQ(again.timeout, options.timeout);
    EXPECT_EQ(again.sync, options.sync);
    EXPECT_TRUE(again.token.empty());
}

} // namespace
} // namespace etsim::cosim
