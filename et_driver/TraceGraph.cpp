#include "et_driver/TraceGraph.h"

#include "kernel/Error.h"

#include <algorithm>
#include <string>

namespace etsim::et {

void TraceGraph::addNode(uint64_t id,
                         const std::vector<uint64_t>& dataDeps,
                         const std::vector<uint64_t>& ctrlDeps,
                         bool keepCtrl)
{
    if (ids.size() >= none - 1)
        throw Error("trace graph: more than " + std::to_string(none - 1) +
                    " nodes in one file; split the trace");
    ids.push_back(id);
    Edges& data = edges[index(EdgeKind::Data)];
    data.rawIds.insert(data.rawIds.end(), dataDeps.begin(), dataDeps.end());
    data.offsets.push_back(data.rawIds.size());
    Edges& ctrl = edges[index(EdgeKind::Ctrl)];
    if (keepCtrl)
        ctrl.rawIds.insert(ctrl.rawIds.end(), ctrlDeps.begin(), ctrlDeps.end());
    ctrl.offsets.push_back(ctrl.rawIds.size());
}

uint32_t TraceGraph::find(uint64_t id) const
{
    auto it = std::lower_bound(byId.begin(), byId.end(), std::make_pair(id, uint32_t{0}));
    if (it == byId.end() || it->first != id)
        return none;
    return it->second;
}

void TraceGraph::resolve()
{
    byId.clear();
    byId.reserve(ids.size());
    for (uint32_t node = 0; node < ids.size(); ++node)
        byId.emplace_back(ids[node], node);
    std::sort(byId.begin(), byId.end());
    for (std::size_t i = 1; i < byId.size(); ++i) {
        if (byId[i].first == byId[i - 1].first) {
            // Every later record points at the first one, not at its predecessor.
            std::size_t first = i - 1;
            while (first > 0 && byId[first - 1].first == byId[i].first)
                --first;
            duplicateList.push_back({byId[first].second, byId[i].second});
        }
    }
    std::sort(duplicateList.begin(),
              duplicateList.end(),
              [](const Duplicate& a, const Duplicate& b) { return a.second < b.second; });

    // Dangling references and self loops are reported in file order, data before ctrl per node.
    std::vector<uint32_t> scratch;
    for (EdgeKind kind : {EdgeKind::Data, EdgeKind::Ctrl}) {
        Edges& e = edges[index(kind)];
        e.targets.clear();
        e.targets.reserve(e.rawIds.size());
        e.resolved.assign(1, 0);
        e.resolved.reserve(ids.size() + 1);
        for (uint32_t node = 0; node < ids.size(); ++node) {
            scratch.clear();
            for (uint64_t k = e.offsets[node]; k < e.offsets[node + 1]; ++k) {
                uint64_t depId = e.rawIds[k];
                uint32_t target = find(depId);
                if (target == none)
                    danglingList.push_back({node, depId, kind});
                else if (depId == ids[node])
                    selfLoopList.push_back({node, kind});
                else
                    scratch.push_back(target);
            }
            std::sort(scratch.begin(), scratch.end());
            scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
            e.targets.insert(e.targets.end(), scratch.begin(), scratch.end());
            e.resolved.push_back(e.targets.size());
        }
        e.rawIds.clear();
        e.rawIds.shrink_to_fit();
        e.offsets.clear();
        e.offsets.shrink_to_fit();
    }
    std::stable_sort(danglingList.begin(),
                     danglingList.end(),
                     [](const Dangling& a, const Dangling& b) { return a.node < b.node; });
    std::stable_sort(selfLoopList.begin(),
                     selfLoopList.end(),
                     [](const SelfLoop& a, const SelfLoop& b) { return a.node < b.node; });
}

const uint32_t* TraceGraph::depsBegin(uint32_t node, EdgeKind kind) const
{
    const Edges& e = edges[index(kind)];
    return e.targets.data() + e.resolved[node];
}

const uint32_t* TraceGraph::depsEnd(uint32_t node, EdgeKind kind) const
{
    const Edges& e = edges[index(kind)];
    return e.targets.data() + e.resolved[node + 1];
}

namespace {

// Calls visit(dep) for each dependency of `node` under `mask`.
template <typename Visit>
void forEachDep(const TraceGraph& graph, uint32_t node, EdgeMask mask, Visit&& visit)
{
    if (mask.data)
        for (const uint32_t* d = graph.depsBegin(node, EdgeKind::Data);
             d != graph.depsEnd(node, EdgeKind::Data);
             ++d)
            visit(*d);
    if (mask.ctrl)
        for (const uint32_t* d = graph.depsBegin(node, EdgeKind::Ctrl);
             d != graph.depsEnd(node, EdgeKind::Ctrl);
             ++d)
            visit(*d);
}

} // namespace

std::vector<uint32_t> TraceGraph::topologicalOrder(EdgeMask mask) const
{
    auto n = static_cast<uint32_t>(ids.size());
    // Dependents lists in CSR form, built from the dependency lists.
    std::vector<uint32_t> remaining(n, 0);
    std::vector<uint64_t> start(static_cast<std::size_t>(n) + 1, 0);
    for (uint32_t node = 0; node < n; ++node)
        forEachDep(*this, node, mask, [&](uint32_t dep) {
            ++remaining[node];
            ++start[dep + 1];
        });
    for (uint32_t node = 0; node < n; ++node)
        start[node + 1] += start[node];
    std::vector<uint32_t> dependents(start[n]);
    std::vector<uint64_t> fill(start.begin(), start.end() - 1);
    for (uint32_t node = 0; node < n; ++node)
        forEachDep(*this, node, mask, [&](uint32_t dep) { dependents[fill[dep]++] = node; });

    std::vector<uint32_t> order;
    order.reserve(n);
    for (uint32_t node = 0; node < n; ++node)
        if (remaining[node] == 0)
            order.push_back(node);
    for (std::size_t head = 0; head < order.size(); ++head) {
        uint32_t node = order[head];
        for (uint64_t k = start[node]; k < start[node + 1]; ++k)
            if (--remaining[dependents[k]] == 0)
                order.push_back(dependents[k]);
    }
    return order;
}

std::vector<TraceGraph::Component> TraceGraph::cyclicComponents(EdgeMask mask) const
{
    auto n = static_cast<uint32_t>(ids.size());
    std::vector<uint32_t> order(n, none);
    std::vector<uint32_t> low(n, 0);
    std::vector<bool> onStack(n, false);
    std::vector<uint32_t> stack;
    // One frame per node on the depth-first path: the node and how many of its edges were seen.
    struct Frame {
        uint32_t node;
        uint64_t next;
    };
    std::vector<Frame> frames;
    std::vector<Component> components;
    uint32_t counter = 0;

    auto degree = [&](uint32_t node) {
        uint64_t d = 0;
        if (mask.data)
            d += static_cast<uint64_t>(depsEnd(node, EdgeKind::Data) -
                                       depsBegin(node, EdgeKind::Data));
        if (mask.ctrl)
            d += static_cast<uint64_t>(depsEnd(node, EdgeKind::Ctrl) -
                                       depsBegin(node, EdgeKind::Ctrl));
        return d;
    };
    auto edgeAt = [&](uint32_t node, uint64_t k) {
        if (mask.data) {
            auto dataCount = static_cast<uint64_t>(depsEnd(node, EdgeKind::Data) -
                                                   depsBegin(node, EdgeKind::Data));
            if (k < dataCount)
                return depsBegin(node, EdgeKind::Data)[k];
            k -= dataCount;
        }
        return depsBegin(node, EdgeKind::Ctrl)[k];
    };
    auto enter = [&](uint32_t node) {
        order[node] = low[node] = counter++;
        stack.push_back(node);
        onStack[node] = true;
        frames.push_back({node, 0});
    };

    for (uint32_t root = 0; root < n; ++root) {
        if (order[root] != none)
            continue;
        enter(root);
        while (!frames.empty()) {
            uint32_t node = frames.back().node;
            if (frames.back().next < degree(node)) {
                uint32_t dep = edgeAt(node, frames.back().next++);
                if (order[dep] == none)
                    enter(dep);
                else if (onStack[dep])
                    low[node] = std::min(low[node], order[dep]);
                continue;
            }
            frames.pop_back();
            if (!frames.empty()) {
                uint32_t parent = frames.back().node;
                low[parent] = std::min(low[parent], low[node]);
            }
            if (low[node] != order[node])
                continue;
            Component component;
            uint32_t member = none;
            do {
                member = stack.back();
                stack.pop_back();
                onStack[member] = false;
                component.push_back(member);
            } while (member != node);
            if (component.size() > 1) {
                std::sort(component.begin(), component.end());
                components.push_back(std::move(component));
            }
        }
    }
    std::sort(components.begin(), components.end(), [](const Component& a, const Component& b) {
        return a.front() < b.front();
    });
    return components;
}

std::vector<uint32_t> TraceGraph::cycleThrough(const Component& component,
                                               uint32_t from,
                                               uint32_t to,
                                               EdgeMask mask) const
{
    // Breadth-first search from `to` back to `from` along dependencies, inside the component.
    auto local = [&component](uint32_t node) {
        auto it = std::lower_bound(component.begin(), component.end(), node);
        return (it != component.end() && *it == node)
                   ? static_cast<uint32_t>(it - component.begin())
                   : none;
    };
    std::vector<uint32_t> parent(component.size(), none);
    std::vector<uint32_t> queue{to};
    parent[local(to)] = to;
    bool found = false;
    for (std::size_t head = 0; head < queue.size() && !found; ++head) {
        uint32_t node = queue[head];
        forEachDep(*this, node, mask, [&](uint32_t dep) {
            uint32_t slot = local(dep);
            if (found || slot == none || parent[slot] != none)
                return;
            parent[slot] = node;
            if (dep == from)
                found = true;
            else
                queue.push_back(dep);
        });
    }
    if (!found)
        return {};
    // Walk back from `from` to `to`, then reverse: from, to, ..., last (which depends on from).
    std::vector<uint32_t> path;
    for (uint32_t node = parent[local(from)]; node != to; node = parent[local(node)])
        path.push_back(node);
    path.push_back(to);
    path.push_back(from);
    std::reverse(path.begin(), path.end());
    return path;
}

} // namespace etsim::et
