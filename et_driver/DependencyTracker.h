#pragma once
// Decides which ET nodes of one rank are ready to issue. Plain C++: the reader feeds it node by
// node, the RankDriver takes ready nodes and reports their completion. Policy, dangling and
// self-loop handling follow shared/spec/chakra-et.md section 7.
//
// Driver protocol (bounded reader window of N nodes):
//
//     while (reader has nodes && tracker.wantsInput(N)) tracker.add(id, dataDeps, ctrlDeps);
//     if (reader is exhausted) tracker.finishFeeding();
//     while (tracker.hasReady()) issue(tracker.popReady());   // ascending node id
//     ... on completion: tracker.finish(id), then loop again ...
//     if (tracker.deadlocked()) report(tracker.stuckReport()->message());
//
// wantsInput(N) is true while fewer than N nodes are pending (added, not finished), and also
// whenever nothing is ready and nothing is in flight: nodes waiting on forward references (or on
// ids that will turn out to be dangling) may fill the window, and only more input or the end of
// the trace can release them. The window therefore bounds the live edges and the ready set in
// the common case, never progress.
//
// Memory (why the layout is what it is). Every id added or mentioned as a dependency gets a
// dense 32-bit index. A later node may name any earlier one, so an index lives until its node
// has finished and every smaller id has too: for ids numbered densely from 0 (etsim gen,
// Chakra's converters) the finished ones below the smallest unfinished (or never added) id are
// then dropped in batches, and only a floor id stays (every id below it was added and has
// finished), so the tracker's memory follows the reader window, not the trace. Ids the direct
// table does not cover (other numberings) keep their indices until the tracker is destroyed.
// Per index: id 8 B + state/remaining-count 4 B + head of its dependents list
// 4 B + the caller's tag 4 B = 20 B, plus the id -> index table: for ids numbered densely from 0
// (the common case) a direct table, 4 B per id below its end, kept at most 2 entries per index
// (4..8 B per index); for other ids a hash table, 4 B per slot at load 0.35..0.7 (5.7..11.4 B per
// index). Flat arrays grow by 1.5x, so their capacity is 1.0..1.5x their size. Amortised that
// is 24..41 B per index (bench/README.md measured 23.1 B per node at 10 M nodes before the direct
// table and the tag). Per edge: 8 B (dependent index + next link) in a pooled singly linked list
// (8..12 B with the pool's growth slack; measured 10.3 B), held only while the edge's source has
// not finished; finish() returns the entries to a free list, so the pool is sized by the peak of
// live edges, not by the trace. Edges to already finished nodes cost nothing. The ready heap holds
// 4 B per ready node.
//
// Limits: at most 2^31 - 1 distinct ids per tracker and 2^29 - 1 dependencies per node; both
// are checked and reported as etsim::Error.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace etsim {

class Logger;

// A read-only view of node ids, valid for the duration of the call it is passed to. Built from
// any contiguous container of uint64 (std::vector, protobuf RepeatedField) or a brace list.
class IdSpan {
public:
    constexpr IdSpan() = default;
    constexpr IdSpan(const std::uint64_t* first, std::size_t count) : first(first), count(count) {}
    // The list lives until the end of the full expression, which covers a call's arguments.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
    IdSpan(std::initializer_list<std::uint64_t> ids) : first(ids.begin()), count(ids.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    template <typename Container,
              typename = std::enable_if_t<
                  std::is_convertible_v<decltype(std::declval<const Container&>().data()),
                                        const std::uint64_t*>>>
    IdSpan(const Container& ids) : first(ids.data()), count(static_cast<std::size_t>(ids.size()))
    {
    }

    const std::uint64_t* begin() const
    {
        return first;
    }
    const std::uint64_t* end() const
    {
        return first + count;
    }
    std::size_t size() const
    {
        return count;
    }
    bool empty() const
    {
        return count == 0;
    }

private:
    const std::uint64_t* first = nullptr;
    std::size_t count = 0;
};

// Which dependency fields hold back a node (spec 7.1).
enum class DependencyPolicy {
    DataAndCtrl, // both fields; what ASTRA-sim's feeder v3 does
    DataOnly,    // data_deps only; right for PyTorch-derived traces whose ctrl_deps are callers
    CtrlOnly,    // ctrl_deps only; legacy text-converter traces keep their edges there
};

// "data+ctrl", "data", "ctrl"; nullopt for anything else.
std::optional<DependencyPolicy> parseDependencyPolicy(std::string_view text);
const char* dependencyPolicyName(DependencyPolicy policy);

struct DependencyTrackerOptions {
    DependencyPolicy policy = DependencyPolicy::DataAndCtrl;
    // Drop dangling and self-loop data dependencies with a counted warning instead of throwing.
    bool lenient = false;
    // Prefix of every error message, normally the trace file ("chakra.0.et"); may be empty.
    std::string traceName;
    // Receives one warning summary per kind of dropped edge (and per-edge lines at debug
    // level); may be null. Must outlive the tracker.
    const Logger* log = nullptr;
};

// Counters; every "dropped" edge no longer holds back its node.
struct DependencyStats {
    std::uint64_t nodesAdded = 0;
    std::uint64_t nodesFinished = 0;
    std::uint64_t edgesKept = 0;            // edges under the policy, less the dropped ones
    std::uint64_t edgesIgnoredByPolicy = 0; // entries of the field the policy does not use
    std::uint64_t forwardRefs = 0;          // kept edges to an id not yet added at the time
    std::uint64_t danglingCtrlDropped = 0;  // ctrl edges to ids absent from the whole trace
    std::uint64_t danglingDataDropped = 0;  // the same for data edges (lenient only)
    std::uint64_t selfLoopsCtrlDropped = 0;
    std::uint64_t selfLoopsDataDropped = 0; // lenient only
    std::uint64_t peakPending = 0;          // most nodes added and not yet finished at once
};

// Bytes held by the tracker's containers, counted from their capacities.
struct DependencyMemory {
    std::size_t indexBytes = 0; // per-id arrays and the id -> index hash table
    std::size_t edgeBytes = 0;  // dependents lists, including free entries
    std::size_t readyBytes = 0; // ready heap
    std::size_t indexCount = 0; // ids known (added or mentioned)
    std::size_t edgeSlots = 0;  // dependents-list entries allocated (live + free)
    std::size_t total() const { return indexBytes + edgeBytes + readyBytes; }
};

// Why a finished feed cannot make progress: nodes that wait forever and one cycle among them.
struct StuckReport {
    std::vector<std::uint64_t> stuck; // every node that can never become ready, ascending
    // One dependency cycle, starting at its smallest id: each node depends on the one before it
    // and the first depends on the last. Empty only if the tracker's invariants were broken.
    std::vector<std::uint64_t> cycle;

    // "deadlock: 4 nodes can never become ready (5, 7, 9, 12); cycle: 5 -> 9 -> 7 -> 5
    // (a -> b: b depends on a)", listing at most maxIds stuck ids.
    std::string message(std::size_t maxIds = 16) const;
};

class DependencyTracker {
public:
    explicit DependencyTracker(DependencyTrackerOptions options = {});
    DependencyTracker(const DependencyTracker&) = delete;
    DependencyTracker& operator=(const DependencyTracker&) = delete;
    DependencyTracker(DependencyTracker&&) = default;
    DependencyTracker& operator=(DependencyTracker&&) = default;

    // Pre-sizes the arrays for `nodes` ids and `edgeCount` live edges (a hint; growth still works).
    void reserve(std::size_t nodes, std::size_t edgeCount);

    // Adds the next node of the trace. Deps may name nodes not added yet (they wait) or nodes
    // already finished (no wait). Throws etsim::Error, leaving the tracker unchanged, for a
    // duplicate id, a data self loop (unless lenient), or a call after finishFeeding().
    // `tag` is the caller's, handed back with the node when it is ready (where the driver keeps
    // the node), so that no second map by id is needed.
    void add(std::uint64_t id, IdSpan dataDeps, IdSpan ctrlDeps, std::uint32_t tag = 0);

    // End of trace: deps on ids never added are now dangling. Ctrl edges are dropped (counted);
    // data edges throw etsim::Error naming the node and the missing id, unless lenient. A second
    // call does nothing.
    void finishFeeding();
    bool feedingFinished() const { return feedingDone; }

    // True when the driver should add another node: fewer than `window` pending, or starved.
    bool wantsInput(std::size_t window) const;

    bool hasReady() const { return !readyHeap.empty(); }
    std::size_t readyCount() const { return readyHeap.size(); }
    // Takes the ready node with the smallest id and marks it in flight. Throws if none is ready.
    std::uint64_t popReady() { return popReadyNode().id; }
    struct ReadyNode {
        std::uint64_t id;
        std::uint32_t tag; // as given to add()
    };
    ReadyNode popReadyNode();
    // Puts an in-flight node back among the ready ones (its engine could not take it).
    void requeue(std::uint64_t id);
    // Completes an in-flight node and releases its dependents. Throws for any other node.
    void finish(std::uint64_t id);

    std::size_t pendingCount() const { return added - finished; } // added, not finished
    std::size_t inFlightCount() const { return inFlight; }
    std::size_t waitingCount() const { return pendingCount() - readyCount() - inFlight; }
    // Feeding finished and every added node finished.
    bool done() const { return feedingDone && pendingCount() == 0; }
    // Feeding finished, nothing ready, nothing in flight, nodes left: they wait on a cycle.
    bool deadlocked() const;
    // Stuck nodes and one cycle when deadlocked(); nullopt otherwise. Costs O(ids + live edges).
    std::optional<StuckReport> stuckReport() const;

    const DependencyStats& stats() const { return counters; }
    DependencyMemory memory() const;

private:
    // The index of `id`, or none; for an id outside the direct table, `slot` is where the
    // probe stopped: the id's slot, or the empty one a new id would take.
    std::uint32_t probe(std::uint64_t id, std::size_t& slot) const;
    std::uint32_t find(std::uint64_t id) const;
    std::uint32_t findOrMention(std::uint64_t id);
    // Gives `id`, which a probe that stopped at `slot` did not find, an index (as a phantom).
    std::uint32_t mention(std::uint64_t id, std::size_t slot);
    void rehash(std::size_t slotCount);
    // Covers ids up to `id` (and some room above) with the direct table, when that is cheap.
    void widenDirect(std::uint64_t id);
    // Drops the indices of ids floorId .. finishedUpTo - 1 and raises the floor to finishedUpTo.
    void retire();
    void linkEdge(std::uint32_t source, std::uint32_t dependent, bool ctrl);
    void release(std::uint32_t dependent);
    void pushReady(std::uint32_t index);
    std::string where() const;

    DependencyTrackerOptions options;
    bool feedingDone = false;

    // Per index; see the memory note at the top of this file.
    // One record per index, not one array per field: finishing a node, releasing its
    // dependent and popping it read all of a record, and in a run of a thousand ranks each
    // record is cold by then, so a field per array cost a cache miss per field. The id is
    // kept as two halves so that the record stays 20 bytes (4-byte aligned).
    struct IndexEntry {
        std::uint32_t idLow;
        std::uint32_t idHigh;
        std::uint32_t status; // state in the top 3 bits, remaining deps below
        std::uint32_t firstDependent;
        std::uint32_t tag;
        static IndexEntry of(std::uint64_t id, std::uint32_t status, std::uint32_t firstDependent)
        {
            return IndexEntry{static_cast<std::uint32_t>(id),
                              static_cast<std::uint32_t>(id >> 32),
                              status,
                              firstDependent,
                              0};
        }
        std::uint64_t id() const { return (std::uint64_t{idHigh} << 32) | idLow; }
    };
    static_assert(sizeof(IndexEntry) == 20);
    std::uint64_t idOf(std::uint32_t index) const { return entries[index].id(); }
    std::vector<IndexEntry> entries;

    struct Edge {
        std::uint32_t dependent; // index, top bit set for a ctrl edge
        std::uint32_t next;
    };
    std::vector<Edge> edges;
    std::uint32_t freeEdges;

    // Id -> index. Traces number their nodes densely from 0 (etsim gen, Chakra's converters),
    // so ids below direct.size() are looked up with one load; the table widens while it stays
    // at most two entries per id known. Other ids go to the hash table: open addressing,
    // linear probing, values are indices.
    std::vector<std::uint32_t> direct;
    std::vector<std::uint32_t> slots;
    std::size_t hashed = 0; // indices in `slots`
    std::vector<std::uint32_t> readyHeap;

    std::size_t added = 0;
    std::size_t finished = 0;
    std::size_t inFlight = 0;
    std::size_t phantoms = 0; // ids mentioned as deps and not added (yet)
    // Every id below the floor was added, has finished and has no index any more; the direct
    // table starts at it. Ids floorId .. finishedUpTo - 1 have finished too: the next to drop.
    std::uint64_t floorId = 0;
    std::uint64_t finishedUpTo = 0;
    DependencyStats counters;
    // First example of each dropped kind, for the warning summary: {node, dependency}.
    std::optional<std::pair<std::uint64_t, std::uint64_t>> firstSelfLoopCtrl;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> firstSelfLoopData;
};

} // namespace etsim
