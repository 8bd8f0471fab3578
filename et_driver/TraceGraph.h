#pragma once
// The dependency graph of one rank file in compact form: node ids and edges only, no node
// bodies. Built while streaming (addNode in file order), then resolve() turns dependency ids
// into node indices. Used by the validator and the trace summary, which must handle files of
// millions of nodes: every algorithm here is iterative (no recursion) and linear.
//
// Memory after resolve(): about 20 B per node plus 4 B per resolved edge; while streaming,
// 8 B per dependency id. Node indices are record positions (0 = first node of the file).

#include <cstdint>
#include <vector>

namespace etsim::et {

enum class EdgeKind : uint8_t { Data = 0, Ctrl = 1 };

// Which edge kinds an algorithm follows.
struct EdgeMask {
    bool data = true;
    bool ctrl = true;
};

class TraceGraph {
public:
    static constexpr uint32_t none = UINT32_MAX;

    struct Duplicate {
        uint32_t first;  // the first record with this id
        uint32_t second; // a later record with the same id
    };
    struct Dangling {
        uint32_t node;      // the node holding the dependency
        uint64_t missingId; // the id no node of the file has
        EdgeKind kind;
    };
    struct SelfLoop {
        uint32_t node;
        EdgeKind kind;
    };
    // A strongly connected group of more than one node under some edge mask.
    using Component = std::vector<uint32_t>;

    // Appends a node; keepCtrl false drops its control dependencies. Throws etsim::Error past
    // 2^32 - 2 nodes.
    void addNode(uint64_t id,
                 const std::vector<uint64_t>& dataDeps,
                 const std::vector<uint64_t>& ctrlDeps,
                 bool keepCtrl);
    // Resolves dependency ids to indices (a duplicated id resolves to its first record) and
    // records duplicates, dangling references and self loops, in file order. Self loops and
    // dangling references are not edges afterwards; a dependency listed twice is kept once.
    void resolve();

    std::size_t size() const { return ids.size(); }
    uint64_t id(uint32_t node) const { return ids[node]; }
    // Index of the first node with that id, or none.
    uint32_t find(uint64_t id) const;

    const std::vector<Duplicate>& duplicates() const { return duplicateList; }
    const std::vector<Dangling>& dangling() const { return danglingList; }
    const std::vector<SelfLoop>& selfLoops() const { return selfLoopList; }

    // Resolved dependencies of `node` of one kind (indices of the nodes it depends on).
    const uint32_t* depsBegin(uint32_t node, EdgeKind kind) const;
    const uint32_t* depsEnd(uint32_t node, EdgeKind kind) const;
    uint64_t edgeCount(EdgeKind kind) const { return edges[index(kind)].targets.size(); }

    // Nodes in an order where every dependency comes before its dependents (Kahn's algorithm,
    // smallest index first among ready nodes is not guaranteed). Nodes on a cycle, or
    // depending on one, are left out, so the result is shorter than size() iff there is a cycle.
    std::vector<uint32_t> topologicalOrder(EdgeMask mask) const;

    // The strongly connected groups of more than one node (Tarjan's algorithm, iterative),
    // each sorted by index, in order of their smallest index.
    std::vector<Component> cyclicComponents(EdgeMask mask) const;

    // One cycle inside `component` that uses the edge from `from` to `to` (both members, `to` a
    // dependency of `from`): from, to, ..., each node depending on the next and the last on
    // `from`. Shortest such cycle (breadth-first search).
    std::vector<uint32_t>
    cycleThrough(const Component& component, uint32_t from, uint32_t to, EdgeMask mask) const;

private:
    struct Edges {
        std::vector<uint64_t> offsets{0};
        std::vector<uint64_t> rawIds;  // while streaming
        std::vector<uint32_t> targets; // after resolve()
        std::vector<uint64_t> resolved{0};
    };
    static std::size_t index(EdgeKind kind) { return static_cast<std::size_t>(kind); }

    std::vector<uint64_t> ids;
    // (id, index) sorted by id, then index; built by resolve().
    std::vector<std::pair<uint64_t, uint32_t>> byId;
    Edges edges[2];
    std::vector<Duplicate> duplicateList;
    std::vector<Dangling> danglingList;
    std::vector<SelfLoop> selfLoopList;
};

} // namespace etsim::et
