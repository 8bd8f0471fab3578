#include "tests/support/TestTargets.h"

#include "kernel/ScTime.h"

#include <algorithm>
#include <string>

namespace etsim::test {
namespace {

constexpr const char* reportType = "etsim/TestTarget";

std::uint64_t psPerStep()
{
    return static_cast<std::uint64_t>(sc_core::sc_get_time_resolution().to_seconds() * 1e12 + 0.5);
}

} // namespace

ProtocolTarget::ProtocolTarget(const sc_core::sc_module_name& name)
    : sc_core::sc_module(name), socket("socket")
{
    socket.register_nb_transport_fw(this, &ProtocolTarget::forward);
    socket.register_b_transport(this, &ProtocolTarget::transport);
    SC_HAS_PROCESS(ProtocolTarget);
    SC_METHOD(fire);
    sensitive << due;
    dont_initialize();
}

std::uint64_t ProtocolTarget::nowPs()
{
    return sc_core::sc_time_stamp().value() * psPerStep();
}

tlm::tlm_sync_enum ProtocolTarget::forward(int index,
                                           tlm::tlm_generic_payload& payload,
                                           tlm::tlm_phase& phase,
                                           sc_core::sc_time& delay)
{
    if (phase == tlm::END_RESP)
        return tlm::TLM_COMPLETED;
    if (phase != tlm::BEGIN_REQ)
        return tlm::TLM_ACCEPTED;
    // Held before arrive(), which may stop the run with an error report: the destructor then
    // still gives the reference back.
    held.hold(payload);
    ++acceptedCount;
    arrive(index, payload, nowPs() + delay.value() * psPerStep());
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
}

void ProtocolTarget::completeAt(int index, tlm::tlm_generic_payload& payload, std::uint64_t timePs)
{
    calendar.push(Due{timePs, order++, index, &payload});
    std::uint64_t now = nowPs();
    due.notify(sc_core::sc_time::from_value((timePs > now ? timePs - now : 0) / psPerStep()));
}

void ProtocolTarget::fire()
{
    std::uint64_t now = nowPs();
    while (!calendar.empty() && calendar.top().timePs <= now) {
        Due next = calendar.top();
        calendar.pop();
        next.payload->set_response_status(tlm::TLM_OK_RESPONSE);
        tlm::tlm_phase phase = tlm::BEGIN_RESP;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        socket[next.index]->nb_transport_bw(*next.payload, phase, delay);
        held.release(*next.payload);
    }
    if (!calendar.empty())
        due.notify(sc_core::sc_time::from_value((calendar.top().timePs - now) / psPerStep()));
}

void ProtocolTarget::transport(int /*index*/,
                               tlm::tlm_generic_payload& payload,
                               sc_core::sc_time& /*delay*/)
{
    payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    std::string text = std::string(name()) + ": b_transport is not supported by this stand-in";
    SC_REPORT_ERROR(reportType, text.c_str());
}

FixedTarget::FixedTarget(const sc_core::sc_module_name& name, FixedTiming timing)
    : ProtocolTarget(name), timing(timing)
{
}

std::uint64_t FixedTarget::cost(const EtNodeInfo& info) const
{
    if (info.durationPs != 0)
        return info.durationPs;
    return timing.latencyPs + info.bytes * timing.psPerByte + info.flops * timing.psPerFlop;
}

void FixedTarget::arrive(int index, tlm::tlm_generic_payload& payload, std::uint64_t arrivalPs)
{
    completeAt(index, payload, arrivalPs + cost(EtNodeExtension::get(payload).info));
}

void FixedTarget::transport(int /*index*/,
                            tlm::tlm_generic_payload& payload,
                            sc_core::sc_time& delay)
{
    delay += sc_core::sc_time::from_value(cost(EtNodeExtension::get(payload).info) / psPerStep());
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

FixedMemoryTarget::FixedMemoryTarget(const sc_core::sc_module_name& name,
                                     Bandwidth bandwidth,
                                     Time latency)
    : ProtocolTarget(name), bandwidth(bandwidth), latency(latency)
{
}

Time FixedMemoryTarget::reserve(const tlm::tlm_generic_payload& payload, Time arrival)
{
    const EtNodeExtension* extension = EtNodeExtension::find(payload);
    std::uint64_t bytes = extension ? extension->info.bytes : payload.get_data_length();
    Access access;
    access.address = payload.get_address();
    access.bytes = bytes;
    access.write = payload.is_write();
    access.start = std::max(arrival, freeAt);
    freeAt = access.start + Size::fromBytes(bytes) / bandwidth;
    access.end = freeAt + latency;
    log.push_back(access);
    moved += bytes;
    return access.end;
}

void FixedMemoryTarget::arrive(int index,
                               tlm::tlm_generic_payload& payload,
                               std::uint64_t arrivalPs)
{
    completeAt(index, payload, reserve(payload, Time::fromPs(arrivalPs)).ps());
}

void FixedMemoryTarget::transport(int /*index*/,
                                  tlm::tlm_generic_payload& payload,
                                  sc_core::sc_time& delay)
{
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    delay = toScTime(reserve(payload, fromScTime(now + delay))) - now;
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

CommTarget::CommTarget(const sc_core::sc_module_name& name, CommTiming timing)
    : ProtocolTarget(name), timing(timing)
{
}

void CommTarget::arrive(int index, tlm::tlm_generic_payload& payload, std::uint64_t /*arrivalPs*/)
{
    const EtNodeInfo& info = EtNodeExtension::get(payload).info;
    if (toUnderlying(info.rank) != static_cast<std::uint32_t>(index)) {
        std::string text = std::string(name()) + ": binding " + std::to_string(index) +
                           " carries a transaction of " + toString(info.rank) +
                           "; bind rank i's communication socket as binding i";
        SC_REPORT_ERROR(reportType, text.c_str());
        return;
    }
    switch (info.kind) {
    case NodeKind::Send:
        send(index, payload, info);
        return;
    case NodeKind::Recv:
        recv(index, payload, info);
        return;
    case NodeKind::Collective:
        collective(index, payload, info);
        return;
    default:
        completeAt(index, payload, nowPs());
        return;
    }
}

void CommTarget::checkSizes(const Posted& sent, const Posted& received, const Key& key) const
{
    if (sent.bytes == received.bytes)
        return;
    std::string text =
        std::string(name()) + ": send node " + std::to_string(sent.node) + " of rank " +
        std::to_string(std::get<0>(key)) + " (" + std::to_string(sent.bytes) +
        " B) matches recv node " + std::to_string(received.node) + " of rank " +
        std::to_string(std::get<1>(key)) + " (" + std::to_string(received.bytes) + " B) with tag " +
        std::to_string(std::get<2>(key)) + ": message sizes differ";
    SC_REPORT_ERROR(reportType, text.c_str());
}

void CommTarget::send(int index, tlm::tlm_generic_payload& payload, const EtNodeInfo& info)
{
    const NodeAttribute::Value* eagerValue = info.findAttribute("eager");
    bool eager = eagerValue != nullptr && std::get_if<std::int64_t>(eagerValue) != nullptr &&
                 std::get<std::int64_t>(*eagerValue) != 0;
    Key key{toUnderlying(info.rank), toUnderlying(*info.peer), info.tag};
    std::uint64_t now = nowPs();
    Posted posted{
        index, &payload, info.bytes, toUnderlying(info.node), now + messagePs(info.bytes), eager};
    auto waiting = recvs.find(key);
    if (waiting != recvs.end() && !waiting->second.empty()) {
        Posted received = waiting->second.front();
        waiting->second.pop_front();
        checkSizes(posted, received, key);
        std::uint64_t arrival = now + messagePs(info.bytes);
        completeAt(index, payload, arrival);
        completeAt(received.index, *received.payload, arrival);
        ++messageCount;
        return;
    }
    if (eager)
        completeAt(index, payload, posted.arrivalPs);
    sends[key].push_back(posted);
}

void CommTarget::recv(int index, tlm::tlm_generic_payload& payload, const EtNodeInfo& info)
{
    Key key{toUnderlying(*info.peer), toUnderlying(info.rank), info.tag};
    std::uint64_t now = nowPs();
    Posted posted{index, &payload, info.bytes, toUnderlying(info.node), 0, false};
    auto waiting = sends.find(key);
    if (waiting == sends.end() || waiting->second.empty()) {
        recvs[key].push_back(posted);
        return;
    }
    Posted sent = waiting->second.front();
    waiting->second.pop_front();
    checkSizes(sent, posted, key);
    ++messageCount;
    if (sent.eager) {
        completeAt(index, payload, std::max(now, sent.arrivalPs));
        return;
    }
    std::uint64_t arrival = now + messagePs(sent.bytes);
    completeAt(sent.index, *sent.payload, arrival);
    completeAt(index, payload, arrival);
}

void CommTarget::collective(int index, tlm::tlm_generic_payload& payload, const EtNodeInfo& info)
{
    std::int64_t group = info.group ? static_cast<std::int64_t>(toUnderlying(*info.group)) : -1;
    Gathering& gathering = gatherings[{group, info.groupSequence}];
    if (gathering.members.empty()) {
        gathering.type = info.collective;
        gathering.bytes = info.bytes;
        gathering.firstNode = toUnderlying(info.node);
        gathering.firstRank = toUnderlying(info.rank);
    } else if (gathering.type != info.collective || gathering.bytes != info.bytes) {
        std::string text =
            std::string(name()) + ": collective " + std::to_string(info.groupSequence) +
            " of group " + std::to_string(group) + ": node " +
            std::to_string(toUnderlying(info.node)) + " of " + toString(info.rank) + " is " +
            toString(info.collective) + " of " + std::to_string(info.bytes) + " B, but node " +
            std::to_string(gathering.firstNode) + " of rank " +
            std::to_string(gathering.firstRank) + " is " + toString(gathering.type) + " of " +
            std::to_string(gathering.bytes) + " B";
        SC_REPORT_ERROR(reportType, text.c_str());
        return;
    }
    gathering.members.emplace_back(index, &payload);
    std::size_t expected = info.groupRanks ? info.groupRanks->size() : socket.size();
    if (gathering.members.size() < expected)
        return;
    std::uint64_t finish =
        nowPs() + timing.collectiveLatencyPs + info.bytes * timing.collectivePsPerByte;
    for (auto& [member, memberPayload] : gathering.members)
        completeAt(member, *memberPayload, finish);
    gatherings.erase({group, info.groupSequence});
    ++collectiveCount;
}

} // namespace etsim::test
