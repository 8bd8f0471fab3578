#include "cosim/adapters/ns3/Ns3Network.h"

#include "cosim/wire/Frame.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <ns3/core-module.h>
#include <ns3/map-scheduler.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>
#include <unordered_map>

namespace etsim::cosim::ns3adapter {

namespace {

constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();
// ns-3 hands the device's payload type through PPP; only IPv4's number maps to a PPP
// protocol, so our packets use it (there is no IP stack on the nodes).
constexpr std::uint16_t protocolNumber = 0x0800;
constexpr std::uint32_t pppHeaderBytes = 2;
constexpr std::uint32_t minMtu = 64;
constexpr std::uint32_t maxMtu = 65000;

// Holds the scheduler the simulator created, so the adapter can read the next event time
// without a global: the factory hands the probe in as an attribute.
class SchedulerProbe : public ns3::Object {
public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId id = ns3::TypeId("etsim::SchedulerProbe")
                                    .SetParent<ns3::Object>()
                                    .AddConstructor<SchedulerProbe>();
        return id;
    }
    const ns3::Scheduler* scheduler = nullptr;
};

// ns-3's default map scheduler that lets the adapter peek at the next event (the time it
// grants to etsim in conservative synchronisation).
class NextEventScheduler : public ns3::MapScheduler {
public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId id =
            ns3::TypeId("etsim::NextEventScheduler")
                .SetParent<ns3::MapScheduler>()
                .AddConstructor<NextEventScheduler>()
                .AddAttribute("Probe",
                              "where the adapter reads this scheduler from",
                              ns3::PointerValue(),
                              ns3::MakePointerAccessor(&NextEventScheduler::setProbe),
                              ns3::MakePointerChecker<SchedulerProbe>());
        return id;
    }

private:
    void setProbe(ns3::Ptr<SchedulerProbe> probe)
    {
        if (probe)
            probe->scheduler = this;
    }
};

// The adapter's transport header: which message a packet belongs to and the (source,
// destination) pair that selects the route at every node. 16 bytes on the wire.
class FlowHeader : public ns3::Header {
public:
    static ns3::TypeId GetTypeId()
    {
        static ns3::TypeId id =
            ns3::TypeId("etsim::FlowHeader").SetParent<ns3::Header>().AddConstructor<FlowHeader>();
        return id;
    }
    ns3::TypeId GetInstanceTypeId() const override { return GetTypeId(); }
    std::uint32_t GetSerializedSize() const override { return 16; }
    void Serialize(ns3::Buffer::Iterator start) const override
    {
        start.WriteHtonU32(src);
        start.WriteHtonU32(dst);
        start.WriteHtonU64(flow);
    }
    std::uint32_t Deserialize(ns3::Buffer::Iterator start) override
    {
        src = start.ReadNtohU32();
        dst = start.ReadNtohU32();
        flow = start.ReadNtohU64();
        return 16;
    }
    void Print(std::ostream& os) const override
    {
        os << "flow " << flow << " " << src << "->" << dst;
    }

    std::uint32_t src = 0;
    std::uint32_t dst = 0;
    std::uint64_t flow = 0;
};

constexpr std::uint32_t flowHeaderBytes = 16;

// The flow header of a packet as a device framed it: behind the device's PPP header.
FlowHeader flowHeaderOfFramed(const ns3::Packet& packet)
{
    ns3::Ptr<ns3::Packet> copy = packet.Copy();
    ns3::PppHeader ppp;
    copy->RemoveHeader(ppp);
    FlowHeader header;
    copy->PeekHeader(header);
    return header;
}

} // namespace

class Ns3Network::Impl {
public:
    struct Flow {
        std::uint32_t src = 0;
        std::uint32_t dst = 0;
        std::uint64_t bytes = 0;
        std::uint64_t unsent = 0;
        std::uint64_t received = 0;
        bool firstSent = false;
        ns3::Ptr<ns3::NetDevice> first;
        ns3::DataRate rate;
    };

    Impl(const FabricDescription& fabricIn, Ns3Options optionsIn)
        : fabric(fabricIn), options(optionsIn)
    {
        if (options.mtu < minMtu || options.mtu > maxMtu)
            throw CosimError("--mtu " + std::to_string(options.mtu) + " is out of range: use " +
                             std::to_string(minMtu) + " to " + std::to_string(maxMtu) + " B");
        for (std::size_t index = 0; index < fabric.links.size(); ++index) {
            const DescribedLink& link = fabric.links[index];
            if (link.from == link.to)
                throw CosimError(
                    "the ns-3 fabric cannot carry link " + std::to_string(index) + " from device " +
                    std::to_string(link.from) +
                    " to itself (a NIC injection/ejection link or a switch crossbar "
                    "limit); remove nic.injection_bandwidth and switch_bandwidth from the "
                    "fabric, or run it locally");
            if (!(link.bytesPerSecond >= 1.0))
                throw CosimError("link " + std::to_string(index) + " has no bandwidth (" +
                                 std::to_string(link.bytesPerSecond) + " B/s)");
        }

        ns3::Time::SetResolution(ns3::Time::PS);
        probe = ns3::CreateObject<SchedulerProbe>();
        ns3::ObjectFactory scheduler;
        scheduler.SetTypeId(NextEventScheduler::GetTypeId());
        scheduler.Set("Probe", ns3::PointerValue(probe));
        ns3::Simulator::SetScheduler(scheduler);
        // Create the simulator (and with it the scheduler) now.
        ns3::Simulator::Now();
        if (probe->scheduler == nullptr)
            throw CosimError("ns-3 did not install the adapter's scheduler");

        usage.resize(fabric.links.size());
        nodes.Create(fabric.devices);
        ns3::PointToPointHelper helper;
        helper.SetDeviceAttribute("Mtu", ns3::UintegerValue(options.mtu));
        helper.SetQueue(
            "ns3::DropTailQueue<Packet>",
            "MaxSize",
            ns3::QueueSizeValue(ns3::QueueSize(ns3::QueueSizeUnit::PACKETS, options.queuePackets)));
        // One channel per directed link: its device at `from` transmits, the one at `to` only
        // receives, so each direction has its own rate and latency.
        for (const DescribedLink& link : fabric.links) {
            const auto bitsPerSecond =
                static_cast<std::uint64_t>(std::llround(link.bytesPerSecond * 8.0));
            helper.SetDeviceAttribute("DataRate", ns3::DataRateValue(ns3::DataRate(bitsPerSecond)));
            helper.SetChannelAttribute(
                "Delay",
                ns3::TimeValue(ns3::PicoSeconds(static_cast<std::int64_t>(link.latencyPs))));
            ns3::NetDeviceContainer pair = helper.Install(nodes.Get(link.from), nodes.Get(link.to));
            transmitters.push_back(pair.Get(0));
            rates.push_back(ns3::DataRate(bitsPerSecond));
            // Busy time: the device is busy for each packet's wire time from the moment it
            // starts transmitting it (PhyTxBegin), which is what etsim's flow model counts.
            pair.Get(0)->TraceConnectWithoutContext(
                "PhyTxBegin",
                ns3::MakeBoundCallback(&Impl::transmitting,
                                       this,
                                       static_cast<std::uint32_t>(transmitters.size() - 1)));
            for (std::uint32_t side = 0; side < 2; ++side) {
                ns3::Ptr<ns3::NetDevice> device = pair.Get(side);
                const std::uint32_t at = side == 0 ? link.from : link.to;
                device->TraceConnectWithoutContext(
                    "MacTxDrop", ns3::MakeBoundCallback(&Impl::dropped, this, at));
                device->TraceConnectWithoutContext(
                    "PhyRxDrop", ns3::MakeBoundCallback(&Impl::dropped, this, at));
            }
        }
        // Filled as pairs start sending (inject): a thousand ranks have a million routes.
        forwarding.resize(fabric.devices);
        for (std::uint32_t device = 0; device < fabric.devices; ++device)
            nodes.Get(device)->RegisterProtocolHandler(
                ns3::MakeCallback(&Impl::receive, this), protocolNumber, nullptr);
    }

    ~Impl() { ns3::Simulator::Destroy(); }

    static void dropped(Impl* self, std::uint32_t device, ns3::Ptr<const ns3::Packet> packet)
    {
        // Both traces hand over the packet as the device framed it, PPP header first: the
        // flow header follows it.
        FlowHeader header = flowHeaderOfFramed(*packet);
        if (self->problem.empty())
            self->problem = "ns-3 dropped a packet of message " + std::to_string(header.flow) +
                            " (rank " + std::to_string(header.src) + " -> " +
                            std::to_string(header.dst) + ") at device " + std::to_string(device) +
                            " at " + std::to_string(self->now()) +
                            " ps: a device queue is full; the message can never complete. "
                            "Raise --queue-packets (now " +
                            std::to_string(self->options.queuePackets) + ")";
        ns3::Simulator::Stop();
    }

    static void transmitting(Impl* self, std::uint32_t link, ns3::Ptr<const ns3::Packet> packet)
    {
        LinkCount& count = self->usage[link];
        count.busyPs += static_cast<std::uint64_t>(
            self->rates[link].CalculateBytesTxTime(packet->GetSize()).GetPicoSeconds());
        count.bytes += packet->GetSize() - pppHeaderBytes - flowHeaderBytes;
    }

    std::uint64_t now() const
    {
        return static_cast<std::uint64_t>(ns3::Simulator::Now().GetPicoSeconds());
    }

    void start(std::uint64_t id)
    {
        Flow& flow = flows.at(id);
        sendNext(id, flow);
    }

    void sendNext(std::uint64_t id, Flow& flow)
    {
        const std::uint64_t chunk =
            std::min<std::uint64_t>(flow.unsent, options.mtu - flowHeaderBytes);
        ns3::Ptr<ns3::Packet> packet = ns3::Create<ns3::Packet>(static_cast<std::uint32_t>(chunk));
        FlowHeader header;
        header.src = flow.src;
        header.dst = flow.dst;
        header.flow = id;
        packet->AddHeader(header);
        flow.unsent -= chunk;
        flow.firstSent = true;
        ++counts.packets;
        const ns3::Time gap = flow.rate.CalculateBytesTxTime(packet->GetSize() + pppHeaderBytes);
        if (!flow.first->Send(packet, flow.first->GetBroadcast(), protocolNumber))
            return; // MacTxDrop has reported it
        if (flow.unsent > 0)
            ns3::Simulator::Schedule(gap, &Impl::sendNextById, this, id);
    }

    void sendNextById(std::uint64_t id)
    {
        const auto found = flows.find(id);
        if (found != flows.end())
            sendNext(id, found->second);
    }

    void receive(ns3::Ptr<ns3::NetDevice> device,
                 ns3::Ptr<const ns3::Packet> packet,
                 std::uint16_t,
                 const ns3::Address&,
                 const ns3::Address&,
                 ns3::NetDevice::PacketType)
    {
        const std::uint32_t at = device->GetNode()->GetId();
        FlowHeader header;
        packet->PeekHeader(header);
        if (at == header.dst) {
            const auto found = flows.find(header.flow);
            if (found == flows.end())
                return;
            Flow& flow = found->second;
            flow.received += packet->GetSize() - flowHeaderBytes;
            if (flow.received >= flow.bytes) {
                done.push_back(Ns3Completion{header.flow, now()});
                flows.erase(found);
                // Let the adapter answer before the clock moves past this arrival.
                ns3::Simulator::Stop();
            }
            return;
        }
        const auto next = forwarding[at].find(FabricDescription::key(header.src, header.dst));
        if (next == forwarding[at].end()) {
            problem = "no route at device " + std::to_string(at) + " for rank " +
                      std::to_string(header.src) + " -> " + std::to_string(header.dst);
            ns3::Simulator::Stop();
            return;
        }
        ns3::Ptr<ns3::NetDevice> out = transmitters[next->second];
        out->Send(packet->Copy(), out->GetBroadcast(), protocolNumber);
    }

    const FabricDescription& fabric;
    Ns3Options options;
    ns3::Ptr<SchedulerProbe> probe;
    ns3::NodeContainer nodes;
    std::vector<ns3::Ptr<ns3::NetDevice>> transmitters; // per link
    std::vector<ns3::DataRate> rates;                   // per link
    struct LinkCount {
        std::uint64_t busyPs = 0;
        std::uint64_t bytes = 0;
    };
    std::vector<LinkCount> usage; // per link
    // Per device: (src, dst) -> outgoing link.
    std::vector<std::unordered_map<std::uint64_t, std::uint32_t>> forwarding;
    std::unordered_map<std::uint64_t, Flow> flows;
    std::vector<Ns3Completion> done;
    std::vector<std::uint32_t> routeScratch;
    std::string problem;
    Ns3Counters counts;
};

Ns3Network::Ns3Network(const FabricDescription& fabric, Ns3Options options)
    : impl(std::make_unique<Impl>(fabric, options))
{
}

Ns3Network::~Ns3Network() = default;

void Ns3Network::inject(std::uint64_t flow,
                        std::uint32_t src,
                        std::uint32_t dst,
                        std::uint64_t bytes,
                        std::uint64_t atPs)
{
    const std::uint64_t now = impl->now();
    if (atPs < now)
        throw CosimError("event in the past: message " + std::to_string(flow) + " (rank " +
                         std::to_string(src) + " -> " + std::to_string(dst) + ") starts at " +
                         std::to_string(atPs) + " ps but ns-3 is at " + std::to_string(now) +
                         " ps");
    std::vector<std::uint32_t>& route = impl->routeScratch;
    if (!impl->fabric.route(src, dst, route) || route.empty())
        throw CosimError("message " + std::to_string(flow) + ": no route from rank " +
                         std::to_string(src) + " to rank " + std::to_string(dst) +
                         " in the fabric description");
    const std::uint64_t pair = FabricDescription::key(src, dst);
    for (std::uint32_t link : route)
        impl->forwarding[impl->fabric.links[link].from].emplace(pair, link);
    Impl::Flow state;
    state.src = src;
    state.dst = dst;
    state.bytes = bytes;
    state.unsent = bytes;
    state.first = impl->transmitters[route.front()];
    state.rate = impl->rates[route.front()];
    if (!impl->flows.emplace(flow, state).second)
        throw CosimError("message " + std::to_string(flow) + " is already in flight");
    ++impl->counts.flows;
    ns3::Simulator::Schedule(
        ns3::PicoSeconds(static_cast<std::int64_t>(atPs - now)), &Impl::start, impl.get(), flow);
}

std::uint64_t Ns3Network::nowPs() const
{
    return impl->now();
}

std::uint64_t Ns3Network::nextEventPs() const
{
    const ns3::Scheduler& scheduler = *impl->probe->scheduler;
    return scheduler.IsEmpty() ? unlimited : scheduler.PeekNext().key.m_ts;
}

void Ns3Network::runUntil(std::uint64_t boundPs)
{
    if (!impl->problem.empty())
        return;
    const std::uint64_t now = impl->now();
    if (boundPs != unlimited && boundPs < now)
        return;
    ++impl->counts.windows;
    // The window ends with an event at the bound; events at the bound scheduled before it run
    // in this window, those scheduled during it in the next ([now, bound) plus FIFO ties).
    ns3::EventId end;
    if (boundPs != unlimited)
        end = ns3::Simulator::Schedule(ns3::PicoSeconds(static_cast<std::int64_t>(boundPs - now)),
                                       [] { ns3::Simulator::Stop(); });
    const auto started = std::chrono::steady_clock::now();
    ns3::Simulator::Run();
    impl->counts.runSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (boundPs != unlimited && !end.IsExpired())
        ns3::Simulator::Remove(end);
}

std::vector<Ns3Completion> Ns3Network::takeCompletions()
{
    std::vector<Ns3Completion> taken;
    taken.swap(impl->done);
    return taken;
}

const std::string& Ns3Network::failure() const
{
    return impl->problem;
}

const Ns3Counters& Ns3Network::counters() const
{
    return impl->counts;
}

std::size_t Ns3Network::inFlight() const
{
    return impl->flows.size();
}

std::vector<RemoteLinkUsage> Ns3Network::linkUsage() const
{
    std::vector<RemoteLinkUsage> links;
    for (std::size_t index = 0; index < impl->usage.size(); ++index) {
        const Impl::LinkCount& count = impl->usage[index];
        if (count.busyPs > 0)
            links.push_back({static_cast<std::uint32_t>(index), count.busyPs, count.bytes});
    }
    return links;
}

} // namespace etsim::cosim::ns3adapter
