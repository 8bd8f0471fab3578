#include "models/net/collectives/CustomAlgorithm.h"

#include "kernel/Error.h"
#include "models/net/collectives/ProgramVerifier.h"

#include <algorithm>

namespace etsim::net {

namespace {

// Positions on a rank's step sequence: 2e is the start of step e, 2e + 1 its end.
std::uint32_t startOf(std::uint32_t step)
{
    return 2 * step;
}

} // namespace

CustomAlgorithm::CustomAlgorithm(std::shared_ptr<const CollectiveProgram> program)
    : source(std::move(program))
{
    const CollectiveProgram& prog = *source;
    label = "custom (" + prog.source + ")";
    const ProgramMatching matching = verifyProgram(prog).matching;
    std::uint32_t ranks = prog.rankCount();
    // Step of each operation's receive, [rank][op].
    std::vector<std::vector<std::uint32_t>> recvStep(ranks);
    std::vector<std::vector<std::uint32_t>> sendStep(ranks);
    steps.resize(ranks);
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        const auto& ops = prog.ranks[rank].ops;
        std::size_t count = ops.size();
        recvStep[rank].assign(count, 0);
        sendStep[rank].assign(count, 0);
        // Operations in dependency order (the verifier proved there is no cycle).
        std::vector<std::uint32_t> waiting(count, 0);
        std::vector<std::vector<std::uint32_t>> after(count);
        for (std::uint32_t index = 0; index < count; ++index)
            for (std::uint32_t dep : ops[index].deps) {
                after[dep].push_back(index);
                ++waiting[index];
            }
        std::vector<std::uint32_t> order;
        for (std::uint32_t index = 0; index < count; ++index)
            if (waiting[index] == 0)
                order.push_back(index);
        std::vector<std::uint32_t> done(count, 0);
        auto& plan = steps[rank];
        auto stepAt = [&](std::uint32_t step) -> Step& {
            if (plan.size() <= step)
                plan.resize(step + 1);
            return plan[step];
        };
        for (std::size_t head = 0; head < order.size(); ++head) {
            std::uint32_t index = order[head];
            const ProgramOp& op = ops[index];
            std::uint32_t ready = 0;
            for (std::uint32_t dep : op.deps)
                ready = std::max(ready, done[dep]);
            std::uint32_t finish = ready;
            if (receives(op.kind)) {
                std::uint32_t step = ready / 2;
                recvStep[rank][index] = step;
                Step& at = stepAt(step);
                ++at.receives;
                if (reduces(op.kind))
                    at.reducedChunks += op.count;
                finish = startOf(step) + 1;
                if (sends(op.kind)) {
                    sendStep[rank][index] = step + 1;
                    stepAt(step + 1);
                    finish = startOf(step + 1);
                }
            } else if (op.kind == ProgramOpKind::Send) {
                std::uint32_t step = (ready + 1) / 2;
                sendStep[rank][index] = step;
                stepAt(step);
                finish = startOf(step);
            } else if (op.kind == ProgramOpKind::Reduce) {
                std::uint32_t step = ready / 2;
                stepAt(step).reducedChunks += op.count;
                finish = startOf(step) + 1;
            }
            done[index] = finish;
            for (std::uint32_t next : after[index])
                if (--waiting[next] == 0)
                    order.push_back(next);
        }
    }
    for (std::uint32_t rank = 0; rank < ranks; ++rank) {
        const auto& ops = prog.ranks[rank].ops;
        for (std::uint32_t index = 0; index < ops.size(); ++index) {
            const ProgramOp& op = ops[index];
            if (!sends(op.kind))
                continue;
            const OpLink& to = matching.sendTo[rank][index];
            steps[rank][sendStep[rank][index]].sends.push_back(
                Message{to.rank, op.count, op.fixedBytes, recvStep[to.rank][to.op]});
        }
        longest = std::max(longest, static_cast<std::uint32_t>(steps[rank].size()));
    }
}

void CustomAlgorithm::check(const PhaseShape& shape) const
{
    const CollectiveProgram& prog = *source;
    // A plain Chakra algorithm trace does not say which collective it implements.
    if (prog.type != CollectiveType::None && shape.type != prog.type)
        throw Error(prog.source + " is a " + toString(prog.type) +
                    " algorithm, but it is asked to run a " + toString(shape.type) +
                    " phase (a local_bw_aware all-reduce over several dimensions runs "
                    "reduce-scatter and all-gather phases; list the custom algorithm under "
                    "that collective, or use optimization: baseline)");
    if (shape.size != prog.rankCount())
        throw Error(prog.source + " has " + std::to_string(prog.rankCount()) +
                    " ranks but the group it runs on has " + std::to_string(shape.size) +
                    " members; write the algorithm for " + std::to_string(shape.size) + " ranks");
}

std::uint32_t CustomAlgorithm::stepCount(const PhaseShape& /*shape*/) const
{
    return longest;
}

void CustomAlgorithm::plan(const PhaseShape& shape,
                           std::uint32_t member,
                           std::uint32_t step,
                           StepPlan& plan) const
{
    const auto& memberSteps = steps[member];
    if (step >= memberSteps.size())
        return;
    const Step& at = memberSteps[step];
    std::uint64_t chunk = source->inputChunks == 0 ? 0 : shape.inputBytes / source->inputChunks;
    for (const Message& message : at.sends)
        plan.addSend(message.peer,
                     message.fixedBytes != 0 ? message.fixedBytes : message.count * chunk,
                     message.peerStep);
    plan.receives = at.receives;
    plan.reducedBytes = at.reducedChunks * chunk;
}

} // namespace etsim::net
