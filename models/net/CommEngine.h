#pragma once
// The fabric's behaviour as plain C++: point-to-point matching and collective algorithms on
// top of the NetworkCore, all driven by one EventCalendar. The SystemC Fabric module wraps it
// (one transaction in, one completion out per rank and node); tests and benchmarks drive it
// directly.
//
// Collectives are matched by (group, groupSequence). A collective's state exists from the
// first member's post; messages to members that have not posted yet are kept until they do.
// Each member runs each chunk through the phases of HierarchicalPlan; a member admits at most
// active_chunks chunks per dimension at a time (FIFO), and as many again for phases whose
// algorithm asks for a queue of their own (CollectiveAlgorithmIf::ownQueue: in-switch
// all-gathers). There is no barrier: a member's step waits only for the messages the
// algorithm says it needs. Every phase starts with the endpoint delay; every step ends with
// the endpoint delay plus the reduction cost (3 * reduced bytes / local memory bandwidth).
//
// Point-to-point: an eager send starts its message at once, a rendezvous send (attribute
// `eager` 0) when its matching recv is posted, as MPI's rendezvous protocol and NCCL's
// send/recv do; sends and recvs match by (source, destination, tag) in order
// (PointToPoint.h); this engine carries their messages. A rendezvous send whose recv never
// comes never completes, and the run ends as a deadlock that names it.

#include "kernel/Extensions.h"
#include "models/net/NetConfig.h"
#include "models/net/PointToPoint.h"
#include "models/net/collectives/HierarchicalPlan.h"
#include "models/net/flow/EventCalendar.h"
#include "models/net/flow/NetworkCore.h"
#include "models/net/topology/TopologyIf.h"

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace etsim::net {

/// One finished collective, for stats and reports.
struct CollectiveRecord {
    CollectiveType type = CollectiveType::None;
    /// The collective's size as the members posted it (Chakra convention), B.
    std::uint64_t bytes = 0;
    std::uint32_t ranks = 0;
    std::uint64_t group = 0;
    std::uint64_t sequence = 0;
    /// First member's post and last member's completion, ps.
    std::uint64_t startPs = 0;
    std::uint64_t endPs = 0;

    /// nccl-tests algorithm bandwidth S / t (S = the gathered total for all-gather), B/s.
    double algorithmBandwidth() const;
    /// nccl-tests bus bandwidth: algbw x 2(n-1)/n (all-reduce), (n-1)/n (reduce-scatter,
    /// all-gather, all-to-all), 1 (broadcast, reduce), B/s.
    double busBandwidth() const;
};

/// What a CrossMessage tells the process it goes to.
enum class CrossKind : std::uint8_t {
    /// The message arrives at `dst` at `arrivalPs`.
    Arrival,
    /// The message reaches link `hop` of its route, which the receiving process times, at
    /// `arrivalPs`, and goes on from there (astra_aware: Partitioning::LinkOwners).
    HandOver,
    /// Point-to-point: send `sendId` of rank `src` completes at `arrivalPs`, when its message
    /// arrived at a rank of another process.
    SendDone,
    /// Point-to-point (Partitioning::LinkOwners): rank `src` posted send `sendId` to `dst` at
    /// `arrivalPs`. The destination's process matches it with its recvs at once, in posting
    /// order, before the message arrives (which may overtake an earlier one of the channel).
    Posted,
};

/// Partitioned runs (docs/partitioned-runs.md): a message between a local rank and a rank that
/// another process simulates, with everything the process it goes to needs to take it.
struct CrossMessage {
    CrossKind kind = CrossKind::Arrival;
    /// When it arrives (Arrival, SendDone) or reaches its next link (HandOver), ps: at least
    /// the lookahead after it left.
    std::uint64_t arrivalPs = 0;
    std::uint32_t src = 0;
    std::uint32_t dst = 0;
    /// The rank whose process takes it: `dst` for an Arrival, `src` for a SendDone, the rank
    /// at the start of link `hop` for a HandOver.
    std::uint32_t via = 0;
    bool pointToPoint = false;
    /// Collectives: the collective (group << 40 | sequence), the receiving member, its chunk
    /// and the global step the message is for.
    std::uint64_t collective = 0;
    std::uint32_t member = 0;
    std::uint32_t chunk = 0;
    std::uint32_t step = 0;
    /// Point-to-point: the send's tag, size (B) and node, in the order the sender posted them,
    /// and its id in the sender's process (for its SendDone).
    std::uint64_t tag = 0;
    std::uint64_t bytes = 0;
    std::uint64_t node = 0;
    std::uint32_t sendId = 0;
    /// HandOver: where and how it goes on (its `src`, `dst` and `via` are this message's).
    HandOver next;
};

/// What a CommEngine of a partitioned run asks of the process it runs in.
class PartitionLink {
public:
    /// True when this process simulates `rank`.
    virtual bool isLocal(std::uint32_t rank) const = 0;
    /// True when one process simulates both ranks.
    virtual bool together(std::uint32_t a, std::uint32_t b) const = 0;
    /// `message` leaves for the process of rank `message.via`.
    virtual void depart(const CrossMessage& message) = 0;

protected:
    ~PartitionLink() = default;
};

class CommEngine final : private MessageSink, private CrossingSink {
public:
    /// Called when a posted node is done, at nowPs(), with the token given to post().
    using Completion = std::function<void(std::uint64_t token)>;

    /// Builds the topology and network for `rankCount` ranks. Throws ConfigError at the
    /// topology's location when its endpoint count differs from rankCount.
    CommEngine(const NetConfig& config, std::uint32_t rankCount);
    ~CommEngine();
    CommEngine(const CommEngine&) = delete;
    CommEngine& operator=(const CommEngine&) = delete;

    void setCompletion(Completion completion) { onComplete = std::move(completion); }

    /// Starts a Send, Recv or Collective node of `info.rank` at nowPs(). Throws etsim::Error
    /// for a node the fabric cannot run (other kinds, peers out of range, a rank outside its
    /// group, members disagreeing on a collective, a size mismatch, an algorithm that does not
    /// fit), naming the rank and node. The rates of the messages it starts are set by settle(),
    /// once for every post of the instant (runUntil and run settle before time moves).
    void post(const EtNodeInfo& info, std::uint64_t token);

    /// Current simulated time, ps.
    std::uint64_t nowPs() const { return calendar.now(); }
    /// True when an event is scheduled or the messages posted at nowPs() wait for settle().
    bool hasEvents() const { return !calendar.empty() || core->settlePending(); }
    /// Time of the next internal event, ps (only when hasEvents()): nowPs() while posted
    /// messages wait for settle().
    std::uint64_t nextEventPs() const
    {
        return core->settlePending() ? calendar.now() : calendar.nextTime();
    }
    /// Sets the rates of the messages posted at nowPs(). Posts at one instant are rated
    /// together: one post of an all-to-all joins the flows of every earlier post into one
    /// component, and rating that component once per post would cost posts x flows.
    void settle();
    /// Runs every event up to and including `limitPs`, then moves the clock to `limitPs`.
    /// Settles first, unless nothing is due and the clock stays where it is (so that posts at
    /// one instant, each preceded by runUntil(now), are still rated together).
    void runUntil(std::uint64_t limitPs);
    /// Settles, and runs until no event is left.
    void run();

    /// Link busy tracks on `timeline` under process `processId` (NetworkCore::attachTimeline).
    void attachTimeline(Timeline& timeline, std::uint32_t processId)
    {
        core->attachTimeline(timeline, processId);
    }
    /// Writes the busy intervals still held for merging (NetworkCore::flushTimeline).
    void flushTimeline() { core->flushTimeline(); }

    /// Co-simulation: messages go to `remote` instead of the flow core (NetworkCore::setRemote).
    void setRemoteNetwork(RemoteNetwork* remote) { core->setRemote(remote); }
    /// The remote network delivered `message` at nowPs() (call runUntil(now) first).
    void remoteArrived(std::uint64_t message) { core->remoteArrived(message); }

    /// Partitioned runs: only `link`'s local ranks post here; messages to other ranks leave
    /// through it and theirs come in through receive(). Call before the first post. Throws
    /// etsim::Error as NetworkCore::setCrossing does.
    void setPartition(PartitionLink* link);
    /// A message from another process, at a time no later than its arrival (the
    /// synchronisation guarantees it). Throws etsim::Error for one that comes too late or a
    /// send whose size differs from its recv's.
    void receive(const CrossMessage& message);

    /// Nodes posted and not yet complete.
    std::uint64_t outstanding() const { return pendingNodes; }
    const TopologyIf& topology() const { return *net; }
    const NetworkCore& network() const { return *core; }
    const NetConfig& config() const { return settings; }
    const std::vector<CollectiveRecord>& records() const { return finished; }
    /// Drops the finished-collective records (long runs keep only what the owner collects).
    void clearRecords() { finished.clear(); }
    std::uint64_t collectivesCompleted() const { return collectiveCount; }
    std::uint64_t pointToPointCompleted() const { return p2pCount; }

private:
    struct ChunkState {
        std::uint32_t phase = 0;
        std::uint32_t step = 0; // within the phase
        std::uint32_t received = 0;
        std::uint32_t expected = 0;
        std::uint64_t reduced = 0;
        bool waiting = false;
        bool started = false;
        // Arrivals for later steps: (global step, count).
        std::vector<std::pair<std::uint32_t, std::uint32_t>> early;
    };
    struct DimQueue {
        std::uint32_t active = 0;
        std::deque<std::uint32_t> waiting;
    };
    struct MemberState {
        bool posted = false;
        std::uint64_t token = 0;
        NodeId node{};
        std::uint32_t chunksDone = 0;
        std::vector<DimQueue> queues;
    };
    struct Instance {
        bool live = false;
        std::uint64_t key = 0;
        std::uint64_t group = 0;
        std::uint64_t sequence = 0;
        CollectiveType type = CollectiveType::None;
        std::uint64_t bytes = 0;
        bool global = true;
        // Member index -> rank (empty for global instances, where member index = rank).
        std::vector<std::uint32_t> ranks;
        std::vector<Phase> phases;
        ChunkSplit split;
        std::vector<MemberState> members;
        std::vector<ChunkState> chunks; // member * chunkCount + chunk
        std::uint32_t posted = 0;
        std::uint32_t done = 0;
        // Members this process simulates (all of them unless the run is partitioned).
        std::uint32_t localMembers = 0;
        std::uint64_t startPs = 0;
        // The latency model (flow, analytical): per phase, the step latency of its algorithm
        // (empty: none), and the collective's base latency.
        std::vector<std::uint64_t> stepLatencyPs;
        std::uint64_t baseLatencyPs = 0;
        NodeId firstNode{};
        std::uint32_t firstRank = 0;
    };
    // What a message or a delay belongs to. copyTag (below) copies it member by member: a new
    // member goes there too.
    struct Tag {
        std::uint32_t instance = 0;
        std::uint32_t member = 0;
        std::uint32_t chunk = 0;
        std::uint32_t step = 0; // global step within the chunk; for p2p unused
        bool pointToPoint = false;
        bool phaseStart = false;      // engine tasks: the phase-start delay rather than a step end
        bool multicast = false;       // a result for every member of member's line (in-switch)
        bool crossed = false;         // engine tasks: a message from another process arrives
        bool programNode = false;     // engine tasks: a COMP node of run `instance` (node `member`)
        bool collectiveStart = false; // engine tasks: a member's base latency has passed
        bool transit = false;         // messages another process started (instance = slot)
    };
    // A collective message from another process, waiting for its arrival time.
    struct CrossArrival {
        std::uint64_t collective = 0;
        std::uint32_t member = 0;
        std::uint32_t chunk = 0;
        std::uint32_t step = 0;
    };
    // Contributions to one in-switch reduction: instance, chunk, global step, and the member
    // index of the switch line's first member.
    using SwitchKey = std::array<std::uint32_t, 4>;
    // "rank R node N", for errors.
    static std::string where(const EtNodeInfo& info);
    static std::string where(std::uint32_t rank, NodeId node);
    void delivered(std::uint64_t cookie) override;
    bool crosses(std::uint32_t dst) const override;
    void crossed(std::uint64_t cookie, std::uint64_t arrivalPs) override;
    void handedOver(std::uint64_t cookie, std::uint64_t atPs, const HandOver& handOver) override;
    void arriving(std::uint64_t cookie, std::uint64_t arrivalPs) override;
    void crossArrived(const Tag& tag);
    // A message of another process's collective reached member `arrival.member` here.
    void collectiveArrived(const CrossArrival& arrival);
    // arrive() for such a message to instance `index`, whose member and chunk are checked.
    void arriveFromAnotherProcess(std::uint32_t index, const CrossArrival& arrival);
    // The CrossMessage that describes the message sent with `tag` (the tag of a local send or
    // collective message, or of a transit message, whose slot it frees).
    CrossMessage describe(const Tag& tag);
    // A transit message reached its local destination (its Deliver).
    void transitDelivered(const Tag& tag);
    // Point-to-point: the send of `message` completes at `arrivalPs`: here (its rank is local)
    // or in its rank's process (a SendDone), unless `message` goes on to the destination's
    // process and that one holds the sender too (the arrival there completes it).
    void sendDone(const CrossMessage& message, std::uint64_t arrivalPs, bool viaDestination);
    // Partitioning::LinkOwners: a send of local rank info.rank to a rank of another process,
    // id `sendId` here, is announced to the destination's process.
    void announceSend(const EtNodeInfo& info, std::uint32_t sendId);
    // The local record of an announced send of another process (and forgets it).
    std::uint32_t announcedSend(const CrossMessage& message);
    // The record here of a point-to-point message's send, arriving at a local rank: its own
    // (a local rank's send that crossed other processes' links), the announced one
    // (LinkOwners), or a new foreign one.
    std::uint32_t localSendOf(const CrossMessage& message);
    // Throws etsim::Error for a message from another process that names ranks, sends or
    // collective members that cannot be (a broken peer).
    void checkReceived(const CrossMessage& message) const;
    // `index` names an instance (instances[index]) in these and the step machine below.
    void arrive(std::uint32_t index, std::uint32_t member, std::uint32_t chunk, std::uint32_t step);
    void contribute(std::uint32_t index,
                    std::uint32_t member,
                    std::uint32_t chunk,
                    std::uint64_t bytes,
                    bool waitForLine);
    void dispatch(const CalendarEvent& event);
    // Member by member: callers build a tag field by field, and a copy in 16-byte words
    // would wait for those narrower stores (a store-forwarding stall on every message).
    static void copyTag(const Tag& from, Tag& to)
    {
        to.instance = from.instance;
        to.member = from.member;
        to.chunk = from.chunk;
        to.step = from.step;
        to.pointToPoint = from.pointToPoint;
        to.phaseStart = from.phaseStart;
        to.multicast = from.multicast;
        to.crossed = from.crossed;
        to.programNode = from.programNode;
        to.collectiveStart = from.collectiveStart;
        to.transit = from.transit;
    }
    // The tag of message `cookie`, freed.
    Tag takeTag(std::uint64_t cookie)
    {
        const auto index = static_cast<std::uint32_t>(cookie);
        freeTags.push_back(index);
        return tags[index];
    }
    // Inline (with schedule): every message and every step takes a tag (3 % of the
    // astra_aware ring's CPU time against an out-of-line call).
    std::uint32_t allocateTag(const Tag& tag)
    {
        if (!freeTags.empty()) {
            std::uint32_t index = freeTags.back();
            freeTags.pop_back();
            copyTag(tag, tags[index]);
            return index;
        }
        tags.push_back(tag);
        return static_cast<std::uint32_t>(tags.size() - 1);
    }

    void postCollective(const EtNodeInfo& info, std::uint64_t token);

    // ASTRA-sim's custom collectives (NodeProgram.h, CommEngineNodePrograms.cpp): a member whose
    // collective runs a node program issues its nodes as their dependencies finish; messages go
    // through the point-to-point matching, so they are timed as the workload's sends.
    struct ProgramRun {
        const NodeProgram* program = nullptr;
        std::uint32_t instance = 0;
        std::uint32_t member = 0;
        std::uint32_t position = 0;         // the algorithm rank this member runs
        std::vector<std::uint32_t> waiting; // per node: dependencies not yet done
        std::uint32_t left = 0;             // nodes not yet done
    };
    void startProgram(std::uint32_t instance, std::uint32_t member, const NodeProgram& program);
    void issueProgramNode(std::uint32_t run, std::uint32_t node);
    void finishProgramNode(std::uint32_t run, std::uint32_t node);
    // Routes a point-to-point completion: a program node's, or a workload node's.
    void pointToPointDone(std::uint64_t token);
    void postSend(const EtNodeInfo& info, std::uint64_t token);
    void postRecv(const EtNodeInfo& info, std::uint64_t token);

    std::uint32_t createInstance(const EtNodeInfo& info, std::uint64_t key);
    // A finished instance's slot made new again, keeping its buffers (see the .cpp).
    static void recycle(Instance& instance);
    // `memberCount` members with `queueCount` queues each and `chunkCount` chunks each, all in
    // their initial state, over the buffers the instance already has.
    static void resetMembers(Instance& instance,
                             std::uint32_t memberCount,
                             std::uint32_t queueCount,
                             std::uint32_t chunkCount);
    static std::uint32_t memberIndex(const Instance& instance, std::uint32_t rank);
    static std::uint32_t rankOf(const Instance& instance, std::uint32_t member);
    // Index of `member` inside the group of `phase`, and the member index of phase peer `peer`.
    std::uint32_t
    phaseIndex(const Instance& instance, const Phase& phase, std::uint32_t member) const;
    std::uint32_t phasePeer(const Instance& instance,
                            const Phase& phase,
                            std::uint32_t member,
                            std::uint32_t peer) const;

    // The admission queue of `phase` in a member's queues.
    std::uint32_t queueOf(const Instance& instance, const Phase& phase) const;
    // The latency model's share of `instance` (stepLatencyPs, baseLatencyPs).
    void priceLatency(Instance& instance) const;
    // With `pipeline_depth: auto`, splits a collective of phases in several dimensions into
    // as many chunks as collectives/PipelineDepth.h chooses, planned again over `dims`.
    void choosePipelineDepth(Instance& instance, const std::vector<PlanDim>& dims) const;
    // Every chunk of a member enters its first phase.
    void startChunks(std::uint32_t index, std::uint32_t member);
    void enterPhase(std::uint32_t index, std::uint32_t member, std::uint32_t chunk);
    void startPhase(std::uint32_t index, std::uint32_t member, std::uint32_t chunk);
    void beginStep(std::uint32_t index, std::uint32_t member, std::uint32_t chunk);
    void checkStep(std::uint32_t index, std::uint32_t member, std::uint32_t chunk);
    void endStep(std::uint32_t index, std::uint32_t member, std::uint32_t chunk);
    static void pullEarly(ChunkState& state, std::uint32_t globalStep);
    void drainReady();
    void finishMember(std::uint32_t index, std::uint32_t member);
    // The endpoint delay plus the reduction of `reducedBytes` (remembered for the last size).
    std::uint64_t delayPs(std::uint64_t reducedBytes);
    void schedule(std::uint64_t delay, const Tag& tag)
    {
        calendar.schedule(calendar.now() + delay, EventKind::EngineTask, allocateTag(tag), 0);
    }
    void complete(std::uint64_t token);

    NetConfig settings;
    std::uint32_t rankCount;
    std::unique_ptr<TopologyIf> net;
    EventCalendar calendar;
    std::unique_ptr<NetworkCore> core;
    AlgorithmSet algorithms;
    Completion onComplete;

    std::vector<Instance> instances;
    std::vector<std::uint32_t> freeInstances;
    std::unordered_map<std::uint64_t, std::uint32_t> instanceByKey;
    std::vector<Tag> tags;
    std::vector<std::uint32_t> freeTags;
    StepPlan scratch;
    std::vector<SwitchStream> switchScratch;
    // Steps that ended without a delay, run from a loop rather than by recursion (a late
    // member may find thousands of its steps' messages already there).
    struct ReadyStep {
        std::uint32_t instance;
        std::uint32_t member;
        std::uint32_t chunk;
    };
    std::vector<ReadyStep> ready;
    bool draining = false;

    PointToPoint pointToPoint;
    std::vector<ProgramRun> runs;
    std::vector<std::uint32_t> freeRuns;
    // Program nodes that finished inside a point-to-point callback, handled from drainReady
    // (the matching must not be re-entered while it walks a channel): (run, node).
    std::deque<std::pair<std::uint32_t, std::uint32_t>> programDone;
    std::vector<std::uint32_t> strides;
    // Per dimension: its lines are the whole run in rank order (stride 1, size = ranks), so
    // a member's index in a phase of it is the member itself (no divisions per message).
    std::vector<bool> spansAllRanks;
    struct StepDelay {
        std::uint64_t reducedBytes = UINT64_MAX;
        std::uint64_t delayPs = 0;
    };
    StepDelay lastDelay;
    std::map<SwitchKey, std::uint32_t> switchContributions;

    // Partitioned runs.
    PartitionLink* partition = nullptr;
    // Partitioning::LinkOwners: sends of other processes' ranks to local ranks, announced
    // (CrossKind::Posted) and not yet arrived: (src << 32 | their send id) -> local record.
    std::unordered_map<std::uint64_t, std::uint32_t> announcedSends;
    // Messages other processes started that go on here (Partitioning::LinkOwners), by slot.
    std::vector<CrossMessage> transits;
    std::vector<std::uint32_t> freeTransits;
    std::vector<CrossArrival> crossArrivals;
    std::vector<std::uint32_t> freeCrossArrivals;
    // Arrivals for collectives no local member has posted yet, replayed when one does.
    std::unordered_map<std::uint64_t, std::vector<CrossArrival>> earlyCollectives;

    std::vector<CollectiveRecord> finished;
    std::uint64_t pendingNodes = 0;
    std::uint64_t collectiveCount = 0;
    std::uint64_t p2pCount = 0;
};

} // namespace etsim::net
