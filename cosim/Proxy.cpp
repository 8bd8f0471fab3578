#include "cosim/Proxy.h"

#include "cosim/NodeInfoWire.h"
#include "cosim/sync/Handshake.h"
#include "cosim/transport/AsioTransport.h"
#include "cosim/transport/SharedMemoryTransport.h"
#include "kernel/ScTime.h"
#include "kernel/WallProfile.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

namespace etsim::cosim {

namespace {

constexpr const char* reportType = "etsim/cosim";
// How long a failed send waits for the I/O thread to report why the link broke.
constexpr std::chrono::milliseconds sendFailureGrace{500};
// How long a failed peer has to exit by itself once the link is closed.
constexpr std::chrono::milliseconds failedPeerGrace{100};
// How long the host waits for the peer's TERMINATE answer (PROTOCOL.md section 6).
constexpr std::chrono::milliseconds terminateWait{2000};

std::uint64_t nowPs()
{
    return fromScTime(sc_core::sc_time_stamp()).ps();
}

std::uint64_t saturatingAdd(std::uint64_t a, std::uint64_t b)
{
    return a > unlimitedPs - b ? unlimitedPs : a + b;
}

// The options are checked before any connection is made.
const ProxyOptions& checked(const ProxyOptions& options, const std::string& name)
{
    if (options.sync == SyncMode::Conservative && options.lookahead.ps() == 0)
        throw CosimError("cosim proxy '" + name +
                         "': lookahead must be greater than zero for conservative "
                         "synchronisation (set it to the component's smallest latency)");
    if (options.sync == SyncMode::LooselyTimed && options.quantum.ps() == 0)
        throw CosimError("cosim proxy '" + name +
                         "': the loosely-timed quantum must be greater than zero");
    if (options.timeout.count() <= 0)
        throw CosimError("cosim proxy '" + name + "': the timeout must be greater than zero");
    if (options.maxOutstanding == 0)
        throw CosimError("cosim proxy '" + name + "': maxOutstanding must be at least 1");
    return options;
}

tlm::tlm_response_status tlmStatus(std::uint8_t wire)
{
    if (wire == Response::byteEnableError)
        return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
    return static_cast<tlm::tlm_response_status>(static_cast<int>(wire) - 4);
}

std::string replaceAll(std::string text, const std::string& from, const std::string& to)
{
    for (std::size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

} // namespace

Proxy::Proxy(const sc_core::sc_module_name& name,
             ProxyOptions options,
             Simulation* simulation,
             std::unique_ptr<Transport> transport)
    : sc_module(name)
    , socket("socket")
    , options(checked(options, basename()))
    , sync(this->options.sync == SyncMode::Conservative   ? this->options.lookahead.ps()
           : this->options.sync == SyncMode::LooselyTimed ? this->options.quantum.ps()
                                                          : 0)
    , completions("completions")
{
    const std::string where = "cosim proxy '" + std::string(this->name()) + "'";
    if (!transport) {
        const Endpoint endpoint = Endpoint::parse(this->options.peer);
        const bool shared = endpoint.kind == Endpoint::Kind::SharedMemory;
        // Shared memory is handed over on a Unix socket.
        Endpoint socketEndpoint = endpoint;
        if (shared) {
            socketEndpoint.kind = Endpoint::Kind::Unix;
            if (socketEndpoint.path.empty()) {
                if (this->options.spawn.empty())
                    throw CosimError(where + ": peer \"shm\" lets etsim choose the socket, so it "
                                             "must also spawn the peer; set spawn or use "
                                             "\"shm:/path\"");
                char unique[40];
                std::snprintf(unique,
                              sizeof unique,
                              "etsim-cosim-%ld-%p.sock",
                              static_cast<long>(::getpid()),
                              static_cast<void*>(this));
                socketEndpoint.path = (std::filesystem::temp_directory_path() / unique).string();
            }
        }
        if (!this->options.spawn.empty() || this->options.listen) {
            Listener listener(socketEndpoint);
            std::string announced = listener.endpoint().toString();
            if (shared)
                announced = "shm:" + listener.endpoint().path;
            if (!this->options.spawn.empty())
                child = std::make_unique<ChildProcess>(
                    replaceAll(this->options.spawn, "{endpoint}", announced));
            ChildProcess* started = child.get();
            transport =
                listener.accept(this->options.timeout, [started]() -> std::optional<std::string> {
                    if (started == nullptr)
                        return std::nullopt;
                    if (std::optional<std::string> how = started->exited())
                        return "the spawned peer " + *how + " before it connected";
                    return std::nullopt;
                });
        } else {
            transport = connectTo(socketEndpoint, this->options.timeout);
        }
        if (shared)
            transport = offerSharedMemory(std::move(transport));
    }
    link = std::make_unique<FrameLink>(std::move(transport), Limits{}, "(not yet known)");
    link->setWriteTimeout(this->options.timeout);

    Hello ours;
    ours.capabilities = capability::conservative | capability::looselyTimed |
                        capability::unsynchronised | capability::sharedMemory | capability::data |
                        (this->options.token.empty() ? 0 : capability::token);
    ours.mode = this->options.sync;
    ours.lookaheadPs = this->options.lookahead.ps();
    ours.quantumPs = this->options.quantum.ps();
    ours.name = "etsim";
    ours.token = this->options.token;
    try {
        peerHello = handshakeAsHost(*link, ours, this->options.description, this->options.timeout);
    } catch (const CosimError& error) {
        throw CosimError(where + " (peer at " + link->describe() +
                         "): handshake failed: " + error.what());
    }

    socket.register_nb_transport_fw(this, &Proxy::forward);
    socket.register_b_transport(this, &Proxy::transport);
    if (simulation != nullptr)
        activity = simulation->enroll(std::string(this->name()));

    frames = link.get();
    if (this->options.io == IoMode::Thread) {
        io = std::make_unique<IoThread>("io", *link);
        frames = io.get();
    }

    SC_METHOD(syncPoint);
    sensitive << syncEvent;
    if (io)
        sensitive << io->arrived();
    // Runs once at time zero: nothing may run before the peer's first grant.

    SC_METHOD(respond);
    sensitive << completions.get_event();
    dont_initialize();
}

Proxy::~Proxy()
{
    terminate();
    link->close();
    // A peer that failed (stalled, say) may never notice the closed link: after a short grace
    // it is stopped, rather than holding the end of the run for the child's full second.
    if (child && (failedRun || !shutdownIssue.empty()) && !child->waitExit(failedPeerGrace))
        child->kill();
}

void Proxy::fail(const std::string& problem)
{
    ended = true;
    failedRun = true;
    std::string cause = problem;
    // A spawned peer that has exited is the real cause of a broken link: say how it ended.
    if (child)
        if (std::optional<std::string> how = child->exited())
            cause += " (the spawned peer " + *how + ")";
    const std::string message = describePeer() + ", at simulated time " +
                                sc_core::sc_time_stamp().to_string() + ": " + cause;
    link->close();
    activity.idle();
    SC_REPORT_ERROR(reportType, message.c_str());
    // With an action other than throwing, the run must still end rather than wait on a dead
    // link.
    sc_core::sc_stop();
    throw CosimError(message);
}

void Proxy::send(const Frame& frame)
{
    try {
        link->send(frame);
    } catch (const CosimError& error) {
        // A write fails when the peer has gone. What it sent before it closed names the cause
        // better than the write's "Broken pipe": an ERROR frame, a malformed frame, the end of
        // the stream. The frames come from the I/O thread, if there is one, as in a run.
        if (std::optional<std::string> cause = causeAfterFailedWrite())
            fail(*cause);
        fail(error.what());
    }
}

std::optional<std::string> Proxy::causeAfterFailedWrite()
{
    const auto deadline = std::chrono::steady_clock::now() + sendFailureGrace;
    try {
        while (std::chrono::steady_clock::now() < deadline) {
            std::optional<Frame> frame =
                frames->wait(std::chrono::duration_cast<std::chrono::microseconds>(
                    deadline - std::chrono::steady_clock::now()));
            if (!frame)
                return std::nullopt;
            if (frame->header.type == MessageType::Error)
                return "the peer reported an error: " + decodeText(frame->payload);
        }
    } catch (const CosimError& error) {
        // What reading found: a malformed frame, or the end of the stream.
        return std::string(error.what());
    }
    return std::nullopt;
}

std::string Proxy::describePeer() const
{
    return "cosim proxy '" + std::string(name()) + "': peer '" + link->peerName() + "' at " +
           link->describe() + ", channel " + std::to_string(options.channel);
}

std::uint64_t Proxy::bound() const
{
    return options.sync == SyncMode::Unsynchronised ? unlimitedPs : sync.bound();
}

void Proxy::armSync()
{
    if (options.sync == SyncMode::Unsynchronised) {
        syncEvent.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    const std::uint64_t limit = bound();
    if (limit == unlimitedPs)
        return;
    const std::uint64_t now = nowPs();
    syncEvent.notify(toScTime(Time::fromPs(std::max(limit, now) - now)));
}

tlm::tlm_sync_enum Proxy::forward(int index,
                                  tlm::tlm_generic_payload& payload,
                                  tlm::tlm_phase& phase,
                                  sc_core::sc_time& delay)
{
    WallScope wallScope(wall, WallPart::Cosim);
    if (phase != tlm::BEGIN_REQ)
        return tlm::TLM_COMPLETED; // END_RESP from a foreign initiator: accepted and ignored
    sendRequest(index, payload, fromScTime(sc_core::sc_time_stamp() + delay).ps(), nullptr);
    phase = tlm::END_REQ;
    delay = sc_core::SC_ZERO_TIME;
    return tlm::TLM_UPDATED;
}

void Proxy::transport(int index, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay)
{
    sc_core::sc_event done;
    sendRequest(index, payload, fromScTime(sc_core::sc_time_stamp() + delay).ps(), &done);
    wait(done);
    delay = sc_core::SC_ZERO_TIME;
}

void Proxy::sendRequest(int index,
                        tlm::tlm_generic_payload& payload,
                        std::uint64_t timePs,
                        sc_core::sc_event* blockingDone)
{
    if (ended)
        fail("a transaction arrived after the link ended");
    if (outstanding.size() >= options.maxOutstanding)
        fail("more than " + std::to_string(options.maxOutstanding) +
             " outstanding requests (maxOutstanding); the peer does not answer fast enough or "
             "the limit is too low");
    // The request and its frame are members so that their buffers are reused.
    request.command = static_cast<std::uint8_t>(payload.get_command());
    request.address = payload.get_address();
    request.node.reset();
    if (const EtNodeExtension* extension = EtNodeExtension::find(payload))
        request.node = toWire(extension->info);
    request.data.clear();
    if (payload.get_data_ptr() != nullptr && payload.get_data_length() > 0 && payload.is_write())
        request.data.assign(payload.get_data_ptr(),
                            payload.get_data_ptr() + payload.get_data_length());

    const std::uint64_t id = nextId++;
    requestFrame.header.type = MessageType::Request;
    requestFrame.header.channel = options.channel;
    requestFrame.header.requestId = id;
    requestFrame.header.timestampPs = timePs;
    encodeRequest(request, requestFrame.payload);
    send(requestFrame);
    held.hold(payload);
    outstanding[&payload] = Outstanding{id, index, timePs, blockingDone};
    byId[id] = &payload;
    ++sentCount;
    sync.sent(timePs);
    activity.busy();
    // The peer may answer as early as timePs + lookahead: the kernel must stop there.
    armSync();
}

void Proxy::handle(Frame& frame)
{
    const FrameHeader& header = frame.header;
    switch (header.type) {
    case MessageType::Response: {
        if ((header.flags & frameflags::response) == 0)
            fail("RESPONSE to request " + std::to_string(header.requestId) +
                 " without the Response flag (PROTOCOL.md section 1: a frame that answers a "
                 "request sets flag bit 0)");
        sync.received();
        const auto found = byId.find(header.requestId);
        if (header.channel != options.channel || found == byId.end())
            fail("RESPONSE to unknown request " + std::to_string(header.requestId) +
                 " on channel " + std::to_string(header.channel));
        Response response;
        try {
            response = decodeResponse(frame.payload);
        } catch (const CosimError& error) {
            fail(error.what());
        }
        tlm::tlm_generic_payload& payload = *found->second;
        byId.erase(found);
        const std::uint64_t now = nowPs();
        std::uint64_t due = header.timestampPs;
        if (due < now) {
            if (options.sync == SyncMode::Conservative)
                fail("causality violated: RESPONSE to request " + std::to_string(header.requestId) +
                     " is due at " + std::to_string(due) + " ps, but the kernel is already at " +
                     std::to_string(now) + " ps");
            ++lateCount;
            due = now;
        }
        payload.set_response_status(tlmStatus(response.status));
        if (payload.is_read() && payload.get_data_ptr() != nullptr &&
            response.data.size() == payload.get_data_length())
            std::copy(response.data.begin(), response.data.end(), payload.get_data_ptr());
        ++responseCount;
        completions.notify(payload, toScTime(Time::fromPs(due - now)));
        return;
    }
    case MessageType::Grant:
        try {
            const std::uint64_t acknowledged = decodeGrant(frame.payload);
            if (acknowledged != header.requestId)
                fail("GRANT acknowledges " + std::to_string(acknowledged) +
                     " frames in its payload but " + std::to_string(header.requestId) +
                     " in its header's request id (PROTOCOL.md section 2: the two counts are the "
                     "same)");
            if (std::optional<std::string> broken =
                    sync.checkGrant(header.timestampPs, acknowledged))
                fail(*broken);
            sync.granted(header.timestampPs, acknowledged);
        } catch (const CosimError& error) {
            if (ended)
                throw;
            fail(error.what());
        }
        return;
    case MessageType::Error:
        fail("the peer reported an error: " + decodeText(frame.payload));
    case MessageType::Terminate:
        fail("the peer ended the link (TERMINATE) with " + std::to_string(outstanding.size()) +
             " request(s) outstanding");
    default:
        fail(std::string("unexpected ") + toString(header.type) + " frame during the run");
    }
}

void Proxy::syncPoint()
{
    WallScope wallScope(wall, WallPart::Cosim);
    if (ended)
        return;
    if (io && io->arrived().triggered())
        ++arrivalCount;
    const auto timeout = std::chrono::duration_cast<std::chrono::microseconds>(options.timeout);
    while (true) {
        try {
            while (std::optional<Frame> frame = frames->poll()) {
                handle(*frame);
                frames->recycle(*frame);
            }
        } catch (const CosimError& error) {
            if (ended)
                throw;
            fail(error.what());
        }
        const std::uint64_t now = nowPs();
        const std::uint64_t next =
            sc_core::sc_pending_activity()
                ? saturatingAdd(now, fromScTime(sc_core::sc_time_to_pending_activity()).ps())
                : unlimitedPs;
        const std::uint64_t limit = bound();
        if (options.sync == SyncMode::Unsynchronised) {
            // Wait only when the kernel has nothing else to do; otherwise look again at its
            // next event.
            if (outstanding.empty() || next != unlimitedPs) {
                if (!outstanding.empty())
                    syncEvent.notify(toScTime(Time::fromPs(next - now)));
                return;
            }
        } else if (next <= limit && limit > now) {
            armSync();
            return;
        }
        // At the bound (limit == now) ask the peer rather than re-arming in the next delta:
        // two proxies at their bounds would otherwise wake each other in delta cycles forever,
        // each seeing the other's sync event as activity at the current time.
        if (options.sync != SyncMode::Unsynchronised && sync.takeGrant(next)) {
            Frame grant;
            grant.header.type = MessageType::Grant;
            grant.header.channel = options.channel;
            grant.header.timestampPs = next;
            grant.header.requestId = sync.receivedCount();
            grant.payload = encodeGrant(sync.receivedCount());
            send(grant);
        }
        ++waitCount;
        std::optional<Frame> frame;
        try {
            frame = waitForPeer(timeout);
        } catch (const CosimError& error) {
            fail(error.what());
        }
        // A stop was requested (a signal): give up the wait, the kernel stops at this delta.
        if (!frame && options.stop != nullptr && options.stop->requested())
            return;
        if (!frame)
            fail("no frame from the peer within " + std::to_string(options.timeout.count()) +
                 " ms while waiting for " +
                 (outstanding.empty() ? std::string("a grant")
                                      : "a grant or one of " + std::to_string(outstanding.size()) +
                                            " outstanding response(s)") +
                 " (peer stalled)");
        try {
            handle(*frame);
        } catch (const CosimError& error) {
            if (ended)
                throw;
            fail(error.what());
        }
        frames->recycle(*frame);
    }
}

std::optional<Frame> Proxy::waitForPeer(std::chrono::microseconds timeout)
{
    // In slices, so that a requested stop and a spawned peer that exited are noticed within
    // one slice rather than after the whole timeout.
    constexpr std::chrono::microseconds slice{50000};
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left <= std::chrono::microseconds::zero())
            return std::nullopt;
        if (std::optional<Frame> frame = frames->wait(std::min(left, slice)))
            return frame;
        if (options.stop != nullptr && options.stop->requested())
            return std::nullopt;
        if (child)
            if (std::optional<std::string> how = child->exited()) {
                // What it wrote before it went is still read first.
                if (std::optional<Frame> last = frames->poll())
                    return last;
                fail("the spawned peer " + *how + " while etsim waited for " +
                     (outstanding.empty()
                          ? std::string("a grant")
                          : std::to_string(outstanding.size()) + " outstanding response(s)"));
            }
    }
}

void Proxy::respond()
{
    WallScope wallScope(wall, WallPart::Cosim);
    while (tlm::tlm_generic_payload* payload = completions.get_next_transaction()) {
        const auto found = outstanding.find(payload);
        const Outstanding entry = found->second;
        outstanding.erase(found);
        if (entry.blockingDone != nullptr) {
            entry.blockingDone->notify();
        } else {
            tlm::tlm_phase phase = tlm::BEGIN_RESP;
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            socket[entry.index]->nb_transport_bw(*payload, phase, delay);
        }
        held.release(*payload);
    }
    if (outstanding.empty())
        activity.idle();
}

void Proxy::end_of_simulation()
{
    beginShutdown();
}

void Proxy::beginShutdown()
{
    if (ended || terminateSent)
        return;
    terminateSent = true;
    terminateDeadline = std::chrono::steady_clock::now() + terminateWait;
    Frame bye;
    bye.header.type = MessageType::Terminate;
    bye.header.channel = options.channel;
    bye.header.timestampPs = nowPs();
    try {
        link->send(bye);
    } catch (const CosimError& error) {
        ended = true;
        noteShutdownIssue(std::string("could not send TERMINATE: ") + error.what());
    }
}

void Proxy::terminate()
{
    beginShutdown();
    if (ended)
        return;
    ended = true;
    // Only the peer's TERMINATE answer confirms the end (PROTOCOL.md section 6); grants sent
    // before it are skipped. Anything else (silence, the link closed, a broken frame) means
    // the peer failed at shutdown, which makes the run fail with a warning. The wait counts
    // from when TERMINATE went out, so proxies that sent theirs together wait together.
    try {
        while (true) {
            const auto left = std::chrono::duration_cast<std::chrono::microseconds>(
                terminateDeadline - std::chrono::steady_clock::now());
            std::optional<Frame> frame =
                left > std::chrono::microseconds::zero() ? frames->wait(left) : frames->poll();
            if (!frame && left <= std::chrono::microseconds::zero()) {
                noteShutdownIssue("did not answer TERMINATE within " +
                                  std::to_string(terminateWait.count()) + " ms (stalled)");
                return;
            }
            if (!frame)
                continue;
            if (frame->header.type == MessageType::Terminate) {
                farewell = decodeText(frame->payload);
                return;
            }
            if (frame->header.type == MessageType::Error) {
                noteShutdownIssue("answered TERMINATE with an error: " +
                                  decodeText(frame->payload));
                return;
            }
        }
    } catch (const CosimError& error) {
        noteShutdownIssue(std::string("did not answer TERMINATE: ") + error.what());
    }
}

void Proxy::noteShutdownIssue(const std::string& problem)
{
    std::string text = problem;
    if (child)
        if (std::optional<std::string> how = child->exited())
            text += " (the spawned peer " + *how + ")";
    shutdownIssue = describePeer() + ": the peer failed at shutdown: " + text;
}

const std::string& Proxy::shutdownProblem()
{
    terminate();
    return shutdownIssue;
}

const std::string& Proxy::finish()
{
    terminate();
    return farewell;
}

} // namespace etsim::cosim
