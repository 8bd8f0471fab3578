// ASTRA-sim's custom collectives in CommEngine (NodeProgram.h; docs/astra-compat.md, "Custom
// collectives"). A member runs the nodes of its algorithm rank's trace: every node is issued
// once the nodes it depends on are done, a COMM_SEND as an eager point-to-point send of its
// comm_size to the group member its comm_dst names, a COMM_RECV as a receive from comm_src,
// both matched on comm_tag with the workload's own sends and receives (as that simulator's
// front_end_sim_send / front_end_sim_recv share one matching), a COMP node as a delay. The
// member's collective is done when all its nodes are. No endpoint delay, chunking, reduction
// cost or admission queue applies: the program says everything.
#include "kernel/Error.h"
#include "models/net/CommEngine.h"
#include "models/net/collectives/NodeProgram.h"

#include <string>

namespace etsim::net {

namespace {

// Point-to-point tokens of program nodes: bit 63 set, the run above bit 32, the node below.
constexpr std::uint64_t programBit = 1ULL << 63;
constexpr std::uint64_t runMask = (1ULL << 31) - 1;

std::uint64_t programToken(std::uint32_t run, std::uint32_t node)
{
    return programBit | static_cast<std::uint64_t>(run) << 32 | node;
}

} // namespace

void CommEngine::pointToPointDone(std::uint64_t token)
{
    if ((token & programBit) == 0) {
        complete(token);
        return;
    }
    programDone.emplace_back(static_cast<std::uint32_t>(token >> 32 & runMask),
                             static_cast<std::uint32_t>(token));
}

void CommEngine::startProgram(std::uint32_t instance,
                              std::uint32_t member,
                              const NodeProgram& program)
{
    const Instance& state = instances[instance];
    const auto members = static_cast<std::uint32_t>(state.members.size());
    if (program.rankCount() != members)
        throw Error("the custom algorithm " + program.source + " has " +
                    std::to_string(program.rankCount()) +
                    " rank files, but the collective's group has " + std::to_string(members) +
                    " members; give one PREFIX.<rank>.et per member of the group");
    if (partition != nullptr)
        throw Error("a custom algorithm of ASTRA-sim's system file (" + program.source +
                    ") cannot run partitioned; run in one process");
    // The algorithm rank: the position in the group in ascending rank order, while algorithm
    // peers name members in the group's own order (ASTRA-sim's CommunicatorGroup sorts a
    // copy of the member list to find the position, and maps peers through the list as given).
    std::uint32_t position = member;
    if (!state.global) {
        position = 0;
        for (std::uint32_t rank : state.ranks)
            position += rank < state.ranks[member] ? 1 : 0;
    }
    std::uint32_t run;
    if (!freeRuns.empty()) {
        run = freeRuns.back();
        freeRuns.pop_back();
    } else {
        if (runs.size() > runMask)
            throw Error("too many custom algorithms in flight");
        run = static_cast<std::uint32_t>(runs.size());
        runs.emplace_back();
    }
    ProgramRun& fresh = runs[run];
    fresh.program = &program;
    fresh.instance = instance;
    fresh.member = member;
    fresh.position = position;
    const std::vector<NodeProgramNode>& nodes = program.ranks[position];
    fresh.waiting.resize(nodes.size());
    for (std::size_t node = 0; node < nodes.size(); ++node)
        fresh.waiting[node] = nodes[node].dependencies;
    fresh.left = static_cast<std::uint32_t>(nodes.size());
    if (fresh.left == 0) {
        freeRuns.push_back(run);
        finishMember(instance, member);
        return;
    }
    // The roots, in file order (the order in which they reach the network when several start
    // at once).
    for (std::uint32_t node = 0; node < nodes.size(); ++node)
        if (nodes[node].dependencies == 0)
            issueProgramNode(run, node);
}

void CommEngine::issueProgramNode(std::uint32_t run, std::uint32_t node)
{
    const ProgramRun& state = runs[run];
    const NodeProgramNode& spec = state.program->ranks[state.position][node];
    const Instance& instance = instances[state.instance];
    const std::uint32_t self = rankOf(instance, state.member);
    switch (spec.kind) {
    case NodeProgramNode::Kind::Send:
        pointToPoint.postSend(programToken(run, node),
                              NodeId{spec.nodeId},
                              self,
                              rankOf(instance, spec.peer),
                              spec.bytes,
                              spec.tag,
                              false);
        break;
    case NodeProgramNode::Kind::Recv:
        pointToPoint.postRecv(programToken(run, node),
                              NodeId{spec.nodeId},
                              rankOf(instance, spec.peer),
                              self,
                              spec.bytes,
                              spec.tag);
        break;
    case NodeProgramNode::Kind::Comp: {
        Tag tag;
        tag.programNode = true;
        tag.instance = run;
        tag.member = node;
        schedule(spec.durationPs, tag);
        break;
    }
    }
}

void CommEngine::finishProgramNode(std::uint32_t run, std::uint32_t node)
{
    ProgramRun& state = runs[run];
    const NodeProgramNode& spec = state.program->ranks[state.position][node];
    for (std::uint32_t dependent : spec.dependents)
        if (--state.waiting[dependent] == 0)
            issueProgramNode(run, dependent);
    if (--state.left > 0)
        return;
    const std::uint32_t instance = state.instance;
    const std::uint32_t member = state.member;
    state = ProgramRun();
    freeRuns.push_back(run);
    finishMember(instance, member);
}

} // namespace etsim::net
