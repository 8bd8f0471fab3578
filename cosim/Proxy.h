#pragma once
// cosim::Proxy stands in for a component that an external peer simulates. It binds the same
// socket a local component would (a multi_passthrough target socket), implements the
// execution protocol (docs/execution-protocol.md): BEGIN_REQ is accepted at once with END_REQ,
// the transaction goes to the peer with its EtNodeExtension fields and absolute time, and
// BEGIN_RESP follows at the time the peer answers. Time synchronisation follows
// cosim/PROTOCOL.md section 5.
//
// Two ways to read the link (ProxyOptions::io):
// - inline (the default): the proxy reads the link (FrameLink) from a SystemC method at sync
//   points only, and blocks there, with a wall-clock timeout, only when the kernel may not
//   advance. No thread hand-off on a round trip: the fastest on a loaded machine.
// - thread: an I/O thread (cosim/IoThread) reads the link and reaches the kernel through a
//   thread-safe async update, so frames are handled as they arrive while the kernel runs (a
//   late loosely-timed or unsynchronised response is delivered as soon as it comes). Each round
//   trip then crosses two thread hand-offs (bench/README.md has both measured).
// Peer failures end the run with SC_REPORT_ERROR naming the proxy, the peer, the channel and
// the simulated time.

#include "cosim/IoThread.h"
#include "cosim/sync/SyncState.h"
#include "cosim/transport/ChildProcess.h"
#include "cosim/transport/FrameLink.h"
#include "cosim/wire/Messages.h"
#include "kernel/PayloadPool.h"
#include "kernel/Simulation.h"
#include "kernel/StopRequest.h"
#include "kernel/Units.h"
#include "kernel/WallProfile.h"

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/peq_with_get.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

namespace etsim::cosim {

/// Which thread reads the link (see the class comment).
enum class IoMode : std::uint8_t {
    Inline = 0,
    Thread = 1,
};

struct ProxyOptions {
    static constexpr std::uint32_t defaultMaxOutstanding = 4096;
    static constexpr std::int64_t defaultTimeoutMs = 10000;

    /// "unix:/path", "tcp:127.0.0.1:PORT", "shm:/path" or "shm" (needs spawn); ignored when a
    /// transport is handed in.
    std::string peer;
    /// When set, etsim listens on `peer`, starts this command line (every "{endpoint}" is
    /// replaced by the endpoint) and shuts the program down at the end of the run.
    std::string spawn;
    /// Listen on `peer` for the peer to connect instead of connecting to it.
    bool listen = false;
    SyncMode sync = SyncMode::Conservative;
    /// Conservative: the smallest latency of the component; must be > 0.
    Time lookahead = Time::fromPs(1000000);
    /// Loosely timed: the allowed skew.
    Time quantum = Time::fromPs(1000000);
    /// Wall-clock limit for connecting and for every wait on the peer.
    std::chrono::milliseconds timeout{defaultTimeoutMs};
    /// Channel id of this proxy on the link.
    std::uint32_t channel = 0;
    /// CONFIG text: the description of the component the peer takes over.
    std::string description;
    std::string token;
    std::uint32_t maxOutstanding = defaultMaxOutstanding;
    IoMode io = IoMode::Inline;
    /// When set and requested (a signal), a wait on the peer gives up within 50 ms so the
    /// run can stop; the link then ends with TERMINATE as usual. Must outlive the proxy.
    const StopRequest* stop = nullptr;
};

class Proxy : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<Proxy> socket;

    SC_HAS_PROCESS(Proxy);
    /// Connects (or listens, or spawns) and runs the handshake; throws CosimError on a bad
    /// option (zero lookahead), a failed connection or a refused handshake. `simulation`
    /// (optional) keeps the run alive while transactions are outstanding.
    Proxy(const sc_core::sc_module_name& name,
          ProxyOptions options,
          Simulation* simulation = nullptr,
          std::unique_ptr<Transport> transport = nullptr);
    ~Proxy() override;

    /// Counts the proxy's time, its waits for the peer included, in `profile` (may be null).
    void attachWallProfile(WallProfile* profile) { wall = profile; }
    /// The peer's HELLO (name, capabilities).
    const Hello& peer() const { return peerHello; }
    /// Process id of a spawned peer's shell (`/bin/sh -c spawn`), or -1. It leads the peer's
    /// process group: signal -id to reach the peer itself.
    pid_t peerProcess() const { return child ? child->id() : -1; }

    std::uint64_t requestsSent() const { return sentCount; }
    std::uint64_t responsesReceived() const { return responseCount; }
    std::uint64_t grantsReceived() const { return sync.grantsReceived(); }
    /// Times the kernel blocked waiting for the peer.
    std::uint64_t waits() const { return waitCount; }
    /// Frames the I/O thread read (io: thread); 0 inline.
    std::uint64_t framesReadByIoThread() const { return io ? io->framesRead() : 0; }
    /// Times the proxy ran because the I/O thread's async update announced frames; 0 inline.
    std::uint64_t arrivalWakeups() const { return arrivalCount; }
    /// Loosely timed / unsynchronised: responses that arrived after their time had passed.
    std::uint64_t lateResponses() const { return lateCount; }
    /// Ends the link (TERMINATE) unless it has ended already, and returns the text the peer put
    /// on its TERMINATE answer (protocol 1.2, e.g. a fabric's link usage); empty when the peer
    /// sent none (a 1.1 peer), did not answer, or the run failed.
    const std::string& finish();
    /// Ends the link like finish(), and says whether the peer failed at shutdown: empty when
    /// it answered TERMINATE, else "cosim proxy '...': peer '...' ...: the peer failed at
    /// shutdown: did not answer TERMINATE ..." (silent, gone, or a broken frame). Empty after
    /// a run that failed (that error is the one to report).
    const std::string& shutdownProblem();
    /// Sends TERMINATE without waiting for the answer (finish() and the destructor wait for
    /// it, until 2 s after it was sent): several proxies that begin together end together.
    void beginShutdown();

private:
    // The run's wall-time profile (--profile); nullptr when not profiled.
    WallProfile* wall = nullptr;
    struct Outstanding {
        std::uint64_t id = 0;
        int index = 0;
        std::uint64_t timePs = 0;
        sc_core::sc_event* blockingDone = nullptr;
    };

    tlm::tlm_sync_enum forward(int index,
                               tlm::tlm_generic_payload& payload,
                               tlm::tlm_phase& phase,
                               sc_core::sc_time& delay);
    void transport(int index, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
    void sendRequest(int index,
                     tlm::tlm_generic_payload& payload,
                     std::uint64_t timePs,
                     sc_core::sc_event* blockingDone);
    /// Sends or fails the run.
    void send(const Frame& frame);
    void syncPoint();
    void respond();
    /// Handles one frame from the peer; false when the peer ended the link.
    void handle(Frame& frame);
    std::uint64_t bound() const;
    void armSync();
    [[noreturn]] void fail(const std::string& problem);
    /// After a write failed: why, from what the peer sent before it closed (an ERROR frame,
    /// a malformed frame, the end of the stream), or nullopt if nothing came in time.
    std::optional<std::string> causeAfterFailedWrite();
    /// Waits for a frame like frames->wait, but gives up early when a stop is requested and
    /// fails the run at once when a spawned peer has exited.
    std::optional<Frame> waitForPeer(std::chrono::microseconds timeout);
    /// "cosim proxy 'NAME': peer 'PEER' at ENDPOINT, channel N".
    std::string describePeer() const;
    void end_of_simulation() override;
    /// Waits for the TERMINATE answer (sending TERMINATE first if beginShutdown has not).
    void terminate();
    void noteShutdownIssue(const std::string& problem);

    ProxyOptions options;
    std::unique_ptr<ChildProcess> child;
    std::unique_ptr<FrameLink> link;
    std::unique_ptr<IoThread> io;  // after link: stops (and joins) before the link goes
    FrameSource* frames = nullptr; // the link itself, or io
    Hello peerHello;
    SyncState sync;
    ActivityToken activity;
    std::unordered_map<tlm::tlm_generic_payload*, Outstanding> outstanding;
    // The references on the outstanding payloads; the destructor gives back those of requests
    // still outstanding when a run was abandoned.
    HeldPayloads held;
    std::unordered_map<std::uint64_t, tlm::tlm_generic_payload*> byId;
    Request request;
    Frame requestFrame;
    tlm_utils::peq_with_get<tlm::tlm_generic_payload> completions;
    sc_core::sc_event syncEvent;
    std::uint64_t nextId = 0;
    std::uint64_t sentCount = 0;
    std::uint64_t responseCount = 0;
    std::uint64_t waitCount = 0;
    std::uint64_t lateCount = 0;
    std::uint64_t arrivalCount = 0;
    bool ended = false;
    bool failedRun = false;
    std::string farewell;
    std::string shutdownIssue;
    bool terminateSent = false;
    std::chrono::steady_clock::time_point terminateDeadline;
};

} // namespace etsim::cosim
