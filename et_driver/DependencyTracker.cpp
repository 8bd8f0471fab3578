#include "et_driver/DependencyTracker.h"

#include "kernel/Error.h"
#include "kernel/IdHash.h"
#include "kernel/Log.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace etsim {

namespace {

constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
// What a lookup gives for an id below the floor: added, finished, and dropped from the arrays.
constexpr std::uint32_t retired = none - 1;
// Finished ids worth dropping at once (see retire()).
constexpr std::size_t retireBatch = 4096;
constexpr std::uint32_t ctrlBit = 0x80000000U;
constexpr std::uint32_t indexMask = 0x7FFFFFFFU;
constexpr std::size_t maxIndices = indexMask; // index values stay clear of the ctrl bit
constexpr unsigned stateShift = 29;
constexpr std::uint32_t countMask = (1U << stateShift) - 1;

// Phantom: named as a dependency but not added (yet). Waiting: added, deps outstanding.
enum State : std::uint32_t { Phantom = 0, Waiting = 1, Ready = 2, Issued = 3, Finished = 4 };

std::uint32_t stateOf(std::uint32_t status)
{
    return status >> stateShift;
}

std::uint32_t withState(std::uint32_t status, State state)
{
    return (status & countMask) | (static_cast<std::uint32_t>(state) << stateShift);
}

// Grows by 1.5x rather than the library's 2x: these arrays are most of the tracker's memory.
template <typename T>
void append(std::vector<T>& values, const T& value)
{
    if (values.size() == values.capacity())
        values.reserve(std::max<std::size_t>(16, values.capacity() + values.capacity() / 2));
    values.push_back(value);
}

} // namespace

std::optional<DependencyPolicy> parseDependencyPolicy(std::string_view text)
{
    if (text == "data+ctrl")
        return DependencyPolicy::DataAndCtrl;
    if (text == "data")
        return DependencyPolicy::DataOnly;
    if (text == "ctrl")
        return DependencyPolicy::CtrlOnly;
    return std::nullopt;
}

const char* dependencyPolicyName(DependencyPolicy policy)
{
    switch (policy) {
    case DependencyPolicy::DataAndCtrl:
        return "data+ctrl";
    case DependencyPolicy::DataOnly:
        return "data";
    case DependencyPolicy::CtrlOnly:
        return "ctrl";
    }
    return "?";
}

std::string StuckReport::message(std::size_t maxIds) const
{
    std::ostringstream out;
    out << "deadlock: " << stuck.size() << (stuck.size() == 1 ? " node" : " nodes")
        << " can never become ready (";
    for (std::size_t i = 0; i < stuck.size() && i < maxIds; ++i)
        out << (i ? ", " : "") << stuck[i];
    if (stuck.size() > maxIds)
        out << ", ... " << stuck.size() - maxIds << " more";
    out << ")";
    if (cycle.empty()) {
        out << "; no cycle found";
        return out.str();
    }
    out << "; cycle: ";
    for (std::uint64_t id : cycle)
        out << id << " -> ";
    out << cycle.front() << " (a -> b: b depends on a)";
    return out.str();
}

DependencyTracker::DependencyTracker(DependencyTrackerOptions options)
    : options(std::move(options)), freeEdges(none), slots(16, none)
{
}

void DependencyTracker::reserve(std::size_t nodes, std::size_t edgeCount)
{
    entries.reserve(nodes);
    edges.reserve(edgeCount);
    // Sized for ids 0..nodes-1, the common numbering; the hash table grows only for the rest.
    direct.reserve(nodes);
}

std::string DependencyTracker::where() const
{
    return options.traceName.empty() ? std::string() : options.traceName + ": ";
}

std::uint32_t DependencyTracker::probe(std::uint64_t id, std::size_t& slot) const
{
    if (id < floorId)
        return retired;
    if (id - floorId < direct.size())
        return direct[id - floorId];
    std::size_t mask = slots.size() - 1;
    for (slot = idHomeSlot(id, mask);; slot = (slot + 1) & mask) {
        std::uint32_t index = slots[slot];
        if (index == none || idOf(index) == id)
            return index;
    }
}

std::uint32_t DependencyTracker::find(std::uint64_t id) const
{
    std::size_t slot = 0;
    return probe(id, slot);
}

void DependencyTracker::rehash(std::size_t slotCount)
{
    slots.assign(slotCount, none);
    std::size_t mask = slots.size() - 1;
    hashed = 0;
    for (std::uint32_t index = 0; index < entries.size(); ++index) {
        if (idOf(index) - floorId < direct.size())
            continue;
        ++hashed;
        std::size_t slot = idHomeSlot(idOf(index), mask);
        while (slots[slot] != none)
            slot = (slot + 1) & mask;
        slots[slot] = index;
    }
}

std::uint32_t DependencyTracker::findOrMention(std::uint64_t id)
{
    std::size_t slot = 0;
    std::uint32_t found = probe(id, slot);
    return found != none ? found : mention(id, slot);
}

std::uint32_t DependencyTracker::mention(std::uint64_t id, std::size_t slot)
{
    if (entries.size() >= maxIndices)
        throw Error(where() + "node " + std::to_string(id) + ": more than " +
                    std::to_string(maxIndices) +
                    " distinct node ids in one trace; split the trace per rank");
    auto index = static_cast<std::uint32_t>(entries.size());
    if (id - floorId >= direct.size())
        widenDirect(id);
    if (id - floorId < direct.size()) {
        direct[id - floorId] = index;
    } else {
        // Keeps the load at or below 0.7 so linear probing stays short. A new table has the
        // id's empty slot elsewhere; otherwise it is where the probe that missed the id stopped.
        if ((hashed + 1) * 10 > slots.size() * 7) {
            rehash(slots.size() * 2);
            probe(id, slot);
        }
        slots[slot] = index;
        ++hashed;
    }
    append(entries, IndexEntry::of(id, withState(0, Phantom), none));
    ++phantoms;
    return index;
}

void DependencyTracker::widenDirect(std::uint64_t id)
{
    // Only by half again or more, so an id costs O(1) amortised, and only while the table keeps
    // at most two entries per id known (plus a start for small traces): 8 B per index at worst,
    // no more than the hash table's 5.7..11.4 B. Sparse ids stay in the hash table.
    // The table covers ids from the floor on.
    const std::uint64_t offset = id - floorId;
    const std::size_t limit = 2 * (entries.size() + 1) + 1024;
    const auto size =
        std::max<std::size_t>({offset < limit ? static_cast<std::size_t>(offset) + 1 : limit + 1,
                               direct.size() + direct.size() / 2,
                               1024});
    if (size > limit)
        return;
    direct.reserve(size); // exactly: resize alone may double the capacity
    direct.resize(size, none);
    if (hashed == 0)
        return;
    // The hashed ids the table now covers move to it; the hash table keeps the others.
    for (std::uint32_t index : slots)
        if (index != none && idOf(index) - floorId < size)
            direct[idOf(index) - floorId] = index;
    rehash(slots.size());
}

void DependencyTracker::retire()
{
    // Ids floorId .. finishedUpTo - 1 are the first entries of the direct table; their nodes
    // have finished, so no live edge and no ready node refers to their indices. The rest keep
    // their order and are numbered anew.
    const std::size_t count = finishedUpTo - floorId;
    std::vector<std::uint32_t> renumbered(entries.size(), 0);
    for (std::size_t offset = 0; offset < count; ++offset)
        renumbered[direct[offset]] = none;
    std::uint32_t kept = 0;
    for (std::uint32_t index = 0; index < entries.size(); ++index) {
        if (renumbered[index] == none)
            continue;
        renumbered[index] = kept;
        entries[kept] = entries[index];
        ++kept;
    }
    entries.resize(kept);
    // Live edges hang off the kept indices and point at waiting nodes, kept too.
    for (std::uint32_t index = 0; index < kept; ++index)
        for (std::uint32_t e = entries[index].firstDependent; e != none; e = edges[e].next)
            edges[e].dependent =
                (edges[e].dependent & ctrlBit) | renumbered[edges[e].dependent & indexMask];
    for (std::uint32_t& index : readyHeap)
        index = renumbered[index];
    direct.erase(direct.begin(), direct.begin() + static_cast<std::ptrdiff_t>(count));
    for (std::uint32_t& index : direct)
        if (index != none)
            index = renumbered[index];
    floorId = finishedUpTo;
    rehash(slots.size());
}

void DependencyTracker::linkEdge(std::uint32_t source, std::uint32_t dependent, bool ctrl)
{
    std::uint32_t entry = freeEdges;
    Edge edge{dependent | (ctrl ? ctrlBit : 0), entries[source].firstDependent};
    if (entry != none) {
        freeEdges = edges[entry].next;
        edges[entry] = edge;
    } else {
        if (edges.size() >= none)
            throw Error(where() + "more than " + std::to_string(none - 1) +
                        " dependency edges waiting at once; lower the reader window");
        entry = static_cast<std::uint32_t>(edges.size());
        append(edges, edge);
    }
    entries[source].firstDependent = entry;
}

void DependencyTracker::pushReady(std::uint32_t index)
{
    entries[index].status = withState(entries[index].status, Ready);
    readyHeap.push_back(index);
    std::push_heap(readyHeap.begin(), readyHeap.end(), [this](std::uint32_t a, std::uint32_t b) {
        return idOf(a) > idOf(b);
    });
}

void DependencyTracker::release(std::uint32_t dependent)
{
    std::uint32_t value = entries[dependent].status - 1; // the count sits in the low bits
    entries[dependent].status = value;
    if ((value & countMask) == 0 && stateOf(value) == Waiting)
        pushReady(dependent);
}

void DependencyTracker::add(std::uint64_t id, IdSpan dataDeps, IdSpan ctrlDeps, std::uint32_t tag)
{
    if (feedingDone)
        throw Error(where() + "node " + std::to_string(id) +
                    " added after finishFeeding(); the trace was declared complete");
    std::size_t slot = 0;
    std::uint32_t existing = probe(id, slot);
    if (existing == retired || (existing != none && stateOf(entries[existing].status) != Phantom))
        throw Error(where() + "node " + std::to_string(id) +
                    " appears twice; node ids must be unique within a trace file");

    bool useData = options.policy != DependencyPolicy::CtrlOnly;
    bool useCtrl = options.policy != DependencyPolicy::DataOnly;
    // Checks that can throw come before any change, so a rejected node leaves no trace.
    if (useData && !options.lenient &&
        std::find(dataDeps.begin(), dataDeps.end(), id) != dataDeps.end())
        throw Error(where() + "node " + std::to_string(id) +
                    " has a data dependency on itself; fix the trace or pass --lenient to drop "
                    "self-loop and dangling data dependencies");
    std::size_t depCount = (useData ? dataDeps.size() : 0) + (useCtrl ? ctrlDeps.size() : 0);
    if (depCount > countMask)
        throw Error(where() + "node " + std::to_string(id) + " has " + std::to_string(depCount) +
                    " dependencies; at most " + std::to_string(countMask) + " are supported");

    // Nothing has changed the table since the probe: a new id goes where it stopped.
    std::uint32_t self = existing != none ? existing : mention(id, slot);
    --phantoms;
    std::uint32_t waits = 0;
    auto take = [&](IdSpan deps, bool ctrl) {
        for (std::uint64_t dep : deps) {
            if (dep == id) {
                if (ctrl) {
                    ++counters.selfLoopsCtrlDropped;
                    if (!firstSelfLoopCtrl)
                        firstSelfLoopCtrl.emplace(id, id);
                } else {
                    ++counters.selfLoopsDataDropped;
                    if (!firstSelfLoopData)
                        firstSelfLoopData.emplace(id, id);
                }
                if (options.log)
                    options.log->debug(where(),
                                       "node ",
                                       id,
                                       ": dropped self-loop ",
                                       ctrl ? "ctrl" : "data",
                                       " dependency");
                continue;
            }
            std::uint32_t source = findOrMention(dep);
            ++counters.edgesKept;
            if (source == retired)
                continue;
            std::uint32_t state = stateOf(entries[source].status);
            if (state == Finished)
                continue;
            if (state == Phantom)
                ++counters.forwardRefs;
            linkEdge(source, self, ctrl);
            ++waits;
        }
    };
    if (useData)
        take(dataDeps, false);
    else
        counters.edgesIgnoredByPolicy += dataDeps.size();
    if (useCtrl)
        take(ctrlDeps, true);
    else
        counters.edgesIgnoredByPolicy += ctrlDeps.size();

    entries[self].status = withState(waits, Waiting);
    entries[self].tag = tag;
    ++added;
    ++counters.nodesAdded;
    counters.peakPending = std::max<std::uint64_t>(counters.peakPending, pendingCount());
    if (waits == 0)
        pushReady(self);
}

void DependencyTracker::finishFeeding()
{
    if (feedingDone)
        return;
    if (phantoms > 0) {
        // First pass only looks: a strict run must throw before anything changes. The node
        // named is the smallest dependent id, so the message does not depend on feed order.
        if (!options.lenient && options.policy != DependencyPolicy::CtrlOnly) {
            std::uint64_t dangling = 0;
            std::pair<std::uint64_t, std::uint64_t> first{0, 0};
            for (std::uint32_t index = 0; index < entries.size(); ++index) {
                if (stateOf(entries[index].status) != Phantom)
                    continue;
                for (std::uint32_t e = entries[index].firstDependent; e != none;
                     e = edges[e].next) {
                    if (edges[e].dependent & ctrlBit)
                        continue;
                    std::pair<std::uint64_t, std::uint64_t> here{
                        idOf(edges[e].dependent & indexMask), idOf(index)};
                    if (dangling == 0 || here < first)
                        first = here;
                    ++dangling;
                }
            }
            if (dangling > 0)
                throw Error(where() + "node " + std::to_string(first.first) +
                            " has a data dependency on node " + std::to_string(first.second) +
                            ", which is not in the trace (" + std::to_string(dangling) +
                            " dangling data dependencies in all); fix the trace or pass "
                            "--lenient to drop them");
        }
        std::optional<std::pair<std::uint64_t, std::uint64_t>> firstCtrl;
        std::optional<std::pair<std::uint64_t, std::uint64_t>> firstData;
        for (std::uint32_t index = 0; index < entries.size(); ++index) {
            if (stateOf(entries[index].status) != Phantom || entries[index].firstDependent == none)
                continue;
            std::uint32_t last = none;
            for (std::uint32_t e = entries[index].firstDependent; e != none; e = edges[e].next) {
                bool ctrl = (edges[e].dependent & ctrlBit) != 0;
                std::uint32_t dependent = edges[e].dependent & indexMask;
                std::pair<std::uint64_t, std::uint64_t> here{idOf(dependent), idOf(index)};
                auto& firstOfKind = ctrl ? firstCtrl : firstData;
                if (!firstOfKind || here < *firstOfKind)
                    firstOfKind = here;
                ++(ctrl ? counters.danglingCtrlDropped : counters.danglingDataDropped);
                --counters.edgesKept;
                if (options.log)
                    options.log->debug(where(),
                                       "node ",
                                       here.first,
                                       ": dropped ",
                                       ctrl ? "ctrl" : "data",
                                       " dependency on absent node ",
                                       here.second);
                release(dependent);
                last = e;
            }
            edges[last].next = freeEdges;
            freeEdges = entries[index].firstDependent;
            entries[index].firstDependent = none;
        }
        if (options.log && firstCtrl)
            options.log->warn(where(),
                              "dropped ",
                              counters.danglingCtrlDropped,
                              " ctrl dependencies on nodes not in the trace (first: node ",
                              firstCtrl->first,
                              " on ",
                              firstCtrl->second,
                              ")");
        if (options.log && firstData)
            options.log->warn(where(),
                              "dropped ",
                              counters.danglingDataDropped,
                              " data dependencies on nodes not in the trace (first: node ",
                              firstData->first,
                              " on ",
                              firstData->second,
                              ")");
    }
    if (options.log && firstSelfLoopCtrl)
        options.log->warn(where(),
                          "dropped ",
                          counters.selfLoopsCtrlDropped,
                          " self-loop ctrl dependencies (first: node ",
                          firstSelfLoopCtrl->first,
                          ")");
    if (options.log && firstSelfLoopData)
        options.log->warn(where(),
                          "dropped ",
                          counters.selfLoopsDataDropped,
                          " self-loop data dependencies (first: node ",
                          firstSelfLoopData->first,
                          ")");
    feedingDone = true;
}

bool DependencyTracker::wantsInput(std::size_t window) const
{
    if (feedingDone)
        return false;
    return pendingCount() < window || (readyHeap.empty() && inFlight == 0);
}

DependencyTracker::ReadyNode DependencyTracker::popReadyNode()
{
    if (readyHeap.empty())
        throw Error(where() + "popReady(): no node is ready; check hasReady() first");
    std::pop_heap(readyHeap.begin(), readyHeap.end(), [this](std::uint32_t a, std::uint32_t b) {
        return idOf(a) > idOf(b);
    });
    std::uint32_t index = readyHeap.back();
    readyHeap.pop_back();
    entries[index].status = withState(entries[index].status, Issued);
    ++inFlight;
    return ReadyNode{idOf(index), entries[index].tag};
}

void DependencyTracker::requeue(std::uint64_t id)
{
    std::uint32_t index = find(id);
    if (index == none || index == retired || stateOf(entries[index].status) != Issued)
        throw Error(where() + "requeue(" + std::to_string(id) + "): node " + std::to_string(id) +
                    " is not in flight; only nodes taken with popReady() can be requeued");
    --inFlight;
    pushReady(index);
}

void DependencyTracker::finish(std::uint64_t id)
{
    std::uint32_t index = find(id);
    std::uint32_t state = index == none      ? Phantom
                          : index == retired ? static_cast<std::uint32_t>(Finished)
                                             : stateOf(entries[index].status);
    if (state != Issued) {
        std::string prefix =
            where() + "finish(" + std::to_string(id) + "): node " + std::to_string(id);
        if (state == Phantom)
            throw Error(prefix + " was never added");
        if (state == Waiting)
            throw Error(prefix + " was not issued: it still waits for " +
                        std::to_string(entries[index].status & countMask) + " dependencies");
        if (state == Ready)
            throw Error(prefix + " is ready but was not issued; take it with popReady() first");
        throw Error(prefix + " has already finished");
    }
    entries[index].status = withState(0, Finished);
    --inFlight;
    ++finished;
    ++counters.nodesFinished;
    std::uint32_t head = entries[index].firstDependent;
    if (head != none) {
        std::uint32_t last = none;
        for (std::uint32_t e = head; e != none; e = edges[e].next) {
            release(edges[e].dependent & indexMask);
            last = e;
        }
        // The whole list goes back to the pool at once.
        edges[last].next = freeEdges;
        freeEdges = head;
        entries[index].firstDependent = none;
    }
    // Ids from the floor on that have all finished can be dropped; they are once they are a
    // batch and at least half the indices, so each index is moved O(1) times.
    while (finishedUpTo - floorId < direct.size()) {
        const std::uint32_t next = direct[finishedUpTo - floorId];
        if (next == none || stateOf(entries[next].status) != Finished)
            break;
        ++finishedUpTo;
    }
    const std::uint64_t done = finishedUpTo - floorId;
    if (done >= retireBatch && 2 * done >= entries.size())
        retire();
}

bool DependencyTracker::deadlocked() const
{
    return feedingDone && readyHeap.empty() && inFlight == 0 && pendingCount() > 0;
}

std::optional<StuckReport> DependencyTracker::stuckReport() const
{
    if (!deadlocked())
        return std::nullopt;
    StuckReport report;
    std::vector<std::uint32_t> stuck;
    for (std::uint32_t index = 0; index < entries.size(); ++index)
        if (stateOf(entries[index].status) == Waiting)
            stuck.push_back(index);
    std::sort(stuck.begin(), stuck.end(), [this](std::uint32_t a, std::uint32_t b) {
        return idOf(a) < idOf(b);
    });
    report.stuck.reserve(stuck.size());
    for (std::uint32_t index : stuck)
        report.stuck.push_back(idOf(index));

    // Every stuck node waits for at least one stuck node (nothing else is unfinished), so
    // following "waits for" links from any stuck node must revisit one: that loop is a cycle.
    // Sources are visited in ascending id, so each node's link is its smallest-id dependency.
    std::vector<std::uint32_t> waitsFor(entries.size(), none);
    for (std::uint32_t source : stuck)
        for (std::uint32_t e = entries[source].firstDependent; e != none; e = edges[e].next) {
            std::uint32_t dependent = edges[e].dependent & indexMask;
            if (waitsFor[dependent] == none)
                waitsFor[dependent] = source;
        }
    std::vector<std::uint32_t> seenAt(entries.size(), none);
    std::vector<std::uint32_t> path;
    std::uint32_t at = stuck.front();
    while (at != none && seenAt[at] == none) {
        seenAt[at] = static_cast<std::uint32_t>(path.size());
        path.push_back(at);
        at = waitsFor[at];
    }
    if (at == none)
        return report;
    // path[seenAt[at]..] runs against the dependency direction; reverse it, then rotate so
    // the smallest id comes first.
    std::vector<std::uint64_t> cycle;
    for (std::size_t i = path.size(); i-- > seenAt[at];)
        cycle.push_back(idOf(path[i]));
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    report.cycle = std::move(cycle);
    return report;
}

DependencyMemory DependencyTracker::memory() const
{
    DependencyMemory bytes;
    bytes.indexBytes = entries.capacity() * sizeof(IndexEntry) +
                       direct.capacity() * sizeof(std::uint32_t) +
                       slots.capacity() * sizeof(std::uint32_t);
    bytes.edgeBytes = edges.capacity() * sizeof(Edge);
    bytes.readyBytes = readyHeap.capacity() * sizeof(std::uint32_t);
    bytes.indexCount = entries.size();
    bytes.edgeSlots = edges.size();
    return bytes;
}

} // namespace etsim
