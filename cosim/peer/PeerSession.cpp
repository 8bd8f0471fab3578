#include "cosim/peer/PeerSession.h"

#include "cosim/sync/Handshake.h"

namespace etsim::cosim {

namespace {
std::uint64_t pendingKey(std::uint32_t channel, std::uint64_t id)
{
    return (std::uint64_t{channel} << 48) ^ id;
}
} // namespace

PeerSession::PeerSession(std::unique_ptr<Transport> transport, PeerOptions options)
    : options(std::move(options)), link(std::move(transport), this->options.limits, "etsim")
{
}

PeerSession::~PeerSession() = default;

void PeerSession::refuse(const std::string& message)
{
    fail(message);
    throw CosimError(message);
}

void PeerSession::fail(const std::string& message)
{
    Frame error;
    error.header.type = MessageType::Error;
    error.header.major = options.major;
    error.payload = encodeText(message);
    try {
        link.send(error);
    } catch (const CosimError&) {
        // The host is gone already; the caller reports `message` itself.
    }
}

const Hello& PeerSession::accept()
{
    const Frame hello = expectFrame(link, MessageType::Hello, options.timeout, "the host's HELLO");
    if (hello.header.major != options.major)
        refuse("protocol major version mismatch: " + options.name + " speaks " +
               versionText(options.major, protocolMinor) + ", etsim speaks " +
               versionText(hello.header.major, hello.header.minor));
    hostHello = decodeHello(hello.payload);
    link.setPeerName(hostHello.name);
    if ((options.capabilities & capabilityOf(hostHello.mode)) == 0)
        refuse(options.name + " cannot run " + toString(hostHello.mode) + " synchronisation");
    if (!options.token.empty() && hostHello.token != options.token)
        refuse("token mismatch: the host presented a different shared token");
    if (hostHello.mode == SyncMode::Conservative && hostHello.lookaheadPs == 0)
        refuse("lookahead must be greater than zero for conservative synchronisation");
    // Without a configure hook the latency is known now; with one, only after CONFIG.
    if (!options.configure)
        checkLookahead();

    Hello ours;
    ours.capabilities = options.capabilities;
    ours.mode = hostHello.mode;
    ours.lookaheadPs = hostHello.lookaheadPs;
    ours.quantumPs = hostHello.quantumPs;
    ours.name = options.name;
    Frame answer;
    answer.header.type = MessageType::Hello;
    answer.header.major = options.major;
    answer.header.flags = frameflags::response;
    answer.payload = encodeHello(ours);
    link.send(answer);

    const Frame config = expectFrame(link, MessageType::Config, options.timeout, "CONFIG");
    configText = decodeText(config.payload);
    if (options.configure) {
        try {
            options.minLatencyPs = options.configure(configText);
        } catch (const CosimError& error) {
            refuse(error.what());
        }
        checkLookahead();
    }
    Frame accepted;
    accepted.header.type = MessageType::Config;
    accepted.header.flags = frameflags::response;
    link.send(accepted);
    return hostHello;
}

void PeerSession::checkLookahead()
{
    if (hostHello.mode == SyncMode::Conservative && hostHello.lookaheadPs > options.minLatencyPs)
        refuse("lookahead " + std::to_string(hostHello.lookaheadPs) +
               " ps exceeds the smallest latency of " + options.name + " (" +
               std::to_string(options.minLatencyPs) +
               " ps): causality would break; configure a lookahead of at most the "
               "component's smallest latency");
}

std::uint64_t PeerSession::bound() const
{
    return mode() == SyncMode::Conservative ? sync.bound() : unlimitedPs;
}

bool PeerSession::handle(Frame& frame, std::vector<Arrival>& arrivals)
{
    const FrameHeader& header = frame.header;
    switch (header.type) {
    case MessageType::Request: {
        if (header.timestampPs < clockPs && mode() == SyncMode::Conservative)
            refuse("causality violated: REQUEST " + std::to_string(header.requestId) +
                   " on channel " + std::to_string(header.channel) + " is due at " +
                   std::to_string(header.timestampPs) + " ps, but " + options.name +
                   "'s clock is at " + std::to_string(clockPs) + " ps");
        if (pending.size() >= 1u << 20)
            refuse("more than 1048576 outstanding requests");
        Arrival arrival;
        arrival.channel = header.channel;
        arrival.id = header.requestId;
        arrival.timePs = header.timestampPs;
        arrival.request = decodeRequest(frame.payload);
        if (!pending.emplace(pendingKey(header.channel, header.requestId), header.timestampPs)
                 .second)
            refuse("request id " + std::to_string(header.requestId) + " on channel " +
                   std::to_string(header.channel) + " is already outstanding");
        sync.received();
        arrivals.push_back(std::move(arrival));
        return true;
    }
    case MessageType::Grant:
        sync.granted(header.timestampPs, decodeGrant(frame.payload));
        return true;
    case MessageType::Terminate: {
        Frame bye;
        bye.header.type = MessageType::Terminate;
        bye.header.flags = frameflags::response;
        if (options.farewell)
            bye.payload = encodeText(options.farewell());
        try {
            link.send(bye);
        } catch (const CosimError&) {
            // The host may close first; the run is over either way.
        }
        terminated = true;
        return false;
    }
    case MessageType::Error:
        throw CosimError("the host reported an error: " + decodeText(frame.payload));
    default:
        refuse(std::string("unexpected ") + toString(header.type) + " frame during the run");
    }
    return false;
}

bool PeerSession::advance(std::uint64_t nextEventPs, std::vector<Arrival>& arrivals)
{
    if (terminated)
        return false;
    const std::size_t before = arrivals.size();
    while (true) {
        while (std::optional<Frame> frame = link.poll()) {
            if (!handle(*frame, arrivals))
                return false;
            link.recycle(*frame);
        }
        if (arrivals.size() > before)
            return true;
        if (nextEventPs != unlimitedPs && nextEventPs <= bound())
            return true;
        // Waiting: tell the host how far it may go (our next event) and what we received.
        // Unsynchronised hosts ignore grants: sending them would double the frames per
        // round trip.
        if (mode() == SyncMode::Conservative ||
            (mode() == SyncMode::LooselyTimed && nextEventPs == unlimitedPs)) {
            if (sync.takeGrant(nextEventPs)) {
                Frame grant;
                grant.header.type = MessageType::Grant;
                grant.header.timestampPs = nextEventPs;
                grant.header.requestId = sync.receivedCount();
                grant.payload = encodeGrant(sync.receivedCount());
                link.send(grant);
            }
        }
        std::optional<Frame> frame = link.wait(options.timeout);
        if (!frame)
            refuse("no frame from the host within " + std::to_string(options.timeout.count()) +
                   " ms");
        if (!handle(*frame, arrivals))
            return false;
        link.recycle(*frame);
    }
}

void PeerSession::respond(const Arrival& arrival, std::uint64_t timePs, Response response)
{
    const auto found = pending.find(pendingKey(arrival.channel, arrival.id));
    if (found == pending.end())
        throw CosimError("respond: request " + std::to_string(arrival.id) + " on channel " +
                         std::to_string(arrival.channel) + " is not outstanding");
    if (mode() == SyncMode::Conservative && timePs < found->second + lookaheadPs())
        throw CosimError("respond: request " + std::to_string(arrival.id) + " arrived at " +
                         std::to_string(found->second) + " ps; an answer at " +
                         std::to_string(timePs) + " ps is earlier than the lookahead of " +
                         std::to_string(lookaheadPs()) + " ps allows");
    pending.erase(found);
    clockPs = std::max(clockPs, timePs);
    // A member frame: its payload buffer is reused from one response to the next.
    responseFrame.header.type = MessageType::Response;
    responseFrame.header.flags = frameflags::response;
    responseFrame.header.channel = arrival.channel;
    responseFrame.header.requestId = arrival.id;
    responseFrame.header.timestampPs = timePs;
    encodeResponse(response, responseFrame.payload);
    sync.sent(timePs);
    link.send(responseFrame);
}

} // namespace etsim::cosim
