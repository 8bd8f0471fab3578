#pragma once
// What an external simulator links to take over a component from etsim (no SystemC): accept
// the connection and the handshake, receive transactions with their times, advance its own
// clock only within grants, and answer.
//
//     PeerSession session(std::move(transport), options);
//     session.accept();                                  // HELLO + CONFIG (session.config())
//     std::vector<PeerSession::Arrival> arrivals;
//     while (session.advance(nextLocalEventPs(), arrivals)) {
//         for (auto& arrival : arrivals) schedule(arrival);  // at arrival.timePs or later
//         arrivals.clear();
//         runEventsUpTo(session.bound());               // may call session.respond(...)
//     }
//
// Errors (host gone, malformed frame, causality violated, host silent past the timeout) throw
// CosimError; the session then sends ERROR when it still can.

#include "cosim/sync/SyncState.h"
#include "cosim/transport/FrameLink.h"
#include "cosim/wire/Messages.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace etsim::cosim {

struct PeerOptions {
    /// Our name in HELLO ("ref-peer", "ns-3 fabric").
    std::string name = "peer";
    std::uint32_t capabilities = capability::conservative | capability::looselyTimed |
                                 capability::unsynchronised | capability::data;
    /// Smallest latency of the component we simulate, ps: a longer lookahead is refused.
    std::uint64_t minLatencyPs = 0;
    /// When set, called with the CONFIG text before it is accepted: builds the component and
    /// returns its smallest latency, ps, which replaces minLatencyPs in the lookahead check (an
    /// adapter learns its latencies from CONFIG). A CosimError it throws refuses CONFIG: the
    /// host receives ERROR with its message.
    std::function<std::uint64_t(const std::string& config)> configure;
    /// When set, called when the host ends the run (TERMINATE): the text it returns goes on our
    /// TERMINATE answer (protocol 1.2; a 1.1 host ignores it), e.g. a fabric's link usage.
    std::function<std::string()> farewell;
    /// When non-empty, the host must present this token.
    std::string token;
    /// How long to wait for the host before giving up.
    std::chrono::milliseconds timeout{30000};
    Limits limits;
    /// Header major version we claim (tests of version mismatch set another).
    std::uint8_t major = protocolMajor;
};

class PeerSession {
public:
    struct Arrival {
        std::uint32_t channel = 0;
        std::uint64_t id = 0;
        std::uint64_t timePs = 0; // when the transaction reaches the component
        Request request;
    };

    PeerSession(std::unique_ptr<Transport> transport, PeerOptions options);
    ~PeerSession();

    /// Runs the handshake. Throws CosimError (after sending ERROR) on a version or capability
    /// mismatch, a wrong token or a lookahead longer than minLatencyPs.
    const Hello& accept();
    const Hello& host() const { return hostHello; }
    const std::string& config() const { return configText; }
    SyncMode mode() const { return hostHello.mode; }
    std::uint64_t lookaheadPs() const { return hostHello.lookaheadPs; }

    /// Returns when requests arrived (appended to `arrivals`; their times are never below the
    /// time of our last response), when an event at `nextEventPs` (~0 = none) may run, or
    /// false when the host ended the run (TERMINATE).
    bool advance(std::uint64_t nextEventPs, std::vector<Arrival>& arrivals);
    /// How far our clock may go, ps (~0 = unlimited).
    std::uint64_t bound() const;

    /// Completes a transaction at `timePs`. In conservative mode the time must be at least the
    /// request's time + lookahead (throws CosimError otherwise).
    void respond(const Arrival& arrival, std::uint64_t timePs, Response response);
    std::size_t outstanding() const { return pending.size(); }

    /// Sends ERROR with `message` (best effort) and closes.
    void fail(const std::string& message);
    /// Sends raw bytes (fault injection in tests).
    void sendRaw(const std::vector<std::uint8_t>& bytes) { link.sendEncoded(bytes); }
    void close() { link.close(); }

private:
    void refuse(const std::string& message);
    void checkLookahead();
    bool handle(Frame& frame, std::vector<Arrival>& arrivals);

    PeerOptions options;
    FrameLink link;
    Hello hostHello;
    std::string configText;
    SyncState sync{0};
    std::uint64_t clockPs = 0;
    bool terminated = false;
    std::unordered_map<std::uint64_t, std::uint64_t> pending; // key: channel<<48 ^ id -> time
    Frame responseFrame;
};

} // namespace etsim::cosim
