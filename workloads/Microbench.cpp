#include "workloads/Microbench.h"

#include "kernel/Error.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace etsim::workloads {

using et::CollectiveType;

std::string_view p2pPatternName(P2pPattern pattern)
{
    return pattern == P2pPattern::Ring ? "ring" : "pairwise";
}

std::optional<P2pPattern> p2pPatternFromName(std::string_view name)
{
    if (name == "ring")
        return P2pPattern::Ring;
    if (name == "pairwise")
        return P2pPattern::Pairwise;
    return std::nullopt;
}

std::optional<et::CollectiveType> collectiveFromName(std::string_view name)
{
    // Compare without case, '_' and '-', so "all-reduce", "allreduce", "ALL_REDUCE" all match.
    auto squash = [](std::string_view text) {
        std::string out;
        for (char c : text)
            if (c != '_' && c != '-')
                out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return out;
    };
    std::string wanted = squash(name);
    for (int32_t type = 0; type <= static_cast<int32_t>(CollectiveType::Barrier); ++type)
        if (squash(et::collectiveTypeName(type)) == wanted)
            return static_cast<CollectiveType>(type);
    return std::nullopt;
}

Microbench::Microbench(MicrobenchSpec spec) : spec(spec)
{
    auto fail = [](const std::string& problem) { throw Error("microbenchmark: " + problem); };
    if (spec.ranks == 0)
        fail("ranks must be >= 1");
    if (spec.groupSize > spec.ranks || spec.ranks % groupSize() != 0)
        fail("group size " + std::to_string(spec.groupSize) + " must divide the rank count " +
             std::to_string(spec.ranks));
    if (spec.bytes <= 0 && !(spec.collective == CollectiveType::Barrier && !spec.pattern))
        fail("size must be > 0 bytes");
    if (spec.iterations == 0)
        fail("iterations must be >= 1");
    if (spec.computeFlops < 0)
        fail("compute FLOPs must be >= 0");
    if (spec.pattern && groupSize() < 2)
        fail("a point-to-point pattern needs groups of at least 2 ranks");
    if (spec.pattern == P2pPattern::Pairwise && groupSize() % 2 != 0)
        fail("the pairwise pattern needs an even group size, got " + std::to_string(groupSize()));
}

std::string Microbench::description() const
{
    std::string what = spec.pattern ? std::string(p2pPatternName(*spec.pattern)) + " exchange"
                                    : et::collectiveTypeName(static_cast<int32_t>(spec.collective));
    return what + " of " + std::to_string(spec.bytes) + " B x " + std::to_string(spec.iterations) +
           " on " + std::to_string(spec.ranks) + " ranks in " + std::to_string(groupCount()) +
           " group(s) of " + std::to_string(groupSize());
}

uint32_t Microbench::groupSize() const
{
    return spec.groupSize == 0 ? spec.ranks : spec.groupSize;
}

uint32_t Microbench::groupIndex(uint32_t rank) const
{
    return spec.layout == GroupLayout::Contiguous ? rank / groupSize() : rank % groupCount();
}

uint32_t Microbench::position(uint32_t rank) const
{
    return spec.layout == GroupLayout::Contiguous ? rank % groupSize() : rank / groupCount();
}

uint32_t Microbench::memberAt(uint32_t index, uint32_t at) const
{
    return spec.layout == GroupLayout::Contiguous ? index * groupSize() + at
                                                  : index + at * groupCount();
}

CommGroup Microbench::group(uint32_t index) const
{
    CommGroup g;
    g.id = index + 1;
    g.description = "bench";
    g.ranks.reserve(groupSize());
    for (uint32_t at = 0; at < groupSize(); ++at)
        g.ranks.push_back(memberAt(index, at));
    return g;
}

std::vector<CommGroup> Microbench::groupsOf(uint32_t rank) const
{
    // Point-to-point needs no group; one group of every rank is the default group "".
    if (spec.pattern || groupSize() == spec.ranks)
        return {};
    return {group(groupIndex(rank))};
}

void Microbench::forEachGroup(const std::function<void(const CommGroup&)>& visit) const
{
    if (spec.pattern || groupSize() == spec.ranks)
        return;
    for (uint32_t index = 0; index < groupCount(); ++index)
        visit(group(index));
}

void Microbench::emitRank(uint32_t rank, RankEmitter& out) const
{
    out.processGroups(groupsOf(rank));
    std::string pg = groupsOf(rank).empty() ? "" : std::to_string(groupIndex(rank) + 1);
    uint32_t index = groupIndex(rank);
    uint32_t at = position(rank);
    std::vector<uint64_t> previous;
    for (uint32_t i = 0; i < spec.iterations; ++i) {
        std::string suffix = "." + std::to_string(i);
        if (spec.computeFlops > 0) {
            // A square-ish GEMM of the requested FLOPs: 2*m*n*k with m = n = k rounded.
            auto side = static_cast<int64_t>(
                std::max(1.0, std::round(std::cbrt(static_cast<double>(spec.computeFlops) / 2))));
            et::OperatorInfo info;
            info.kind = et::OpKind::Gemm;
            info.dtype = spec.dtype;
            info.gemms.push_back({side, side, side, 1});
            uint64_t bytes = static_cast<uint64_t>(3 * side * side) *
                             static_cast<uint64_t>(et::bytesPerElement(spec.dtype));
            // Three tensors of its own per iteration: the collective between iterations
            // leaves nothing for the next GEMM to reuse.
            NodeTensors tensors;
            tensors.inputs = {{3 * uint64_t{i} + 1, bytes / 3}, {3 * uint64_t{i} + 2, bytes / 3}};
            tensors.outputs = {{3 * uint64_t{i} + 3, bytes / 3}};
            previous = {out.compute("compute" + suffix, info, bytes, previous, tensors)};
        }
        if (spec.computeMicros > 0)
            previous = {out.delay("delay" + suffix, spec.computeMicros, previous)};
        if (!spec.pattern) {
            previous = {out.collective(
                et::collectiveTypeName(static_cast<int32_t>(spec.collective)) + suffix,
                spec.collective,
                spec.bytes,
                pg,
                previous)};
            continue;
        }
        // Tag = iteration, so the k-th message between two ranks matches the k-th receive.
        auto tag = static_cast<int32_t>(i);
        uint32_t size = groupSize();
        uint32_t sendTo = 0;
        uint32_t recvFrom = 0;
        if (*spec.pattern == P2pPattern::Ring) {
            sendTo = memberAt(index, (at + 1) % size);
            recvFrom = memberAt(index, (at + size - 1) % size);
        } else {
            sendTo = recvFrom = memberAt(index, at ^ 1U);
        }
        uint64_t s = out.send("send" + suffix, sendTo, spec.bytes, tag, previous);
        uint64_t r = out.recv("recv" + suffix, recvFrom, spec.bytes, tag, previous);
        previous = {s, r};
    }
}

} // namespace etsim::workloads
