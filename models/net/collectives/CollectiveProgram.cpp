#include "models/net/collectives/CollectiveProgram.h"

#include <algorithm>
#include <iterator>

namespace etsim::net {

namespace {

// Per kind, in ProgramOpKind order: MSCCL name, receives, sends, reduces.
struct KindTraits {
    // A view, so matching a name compares lengths first (millions of steps are matched).
    std::string_view name;
    bool receives;
    bool sends;
    bool reduces;
};
constexpr KindTraits kindTraits[] = {
    {"s", false, true, false},
    {"r", true, false, false},
    {"rrc", true, false, true},
    {"rrs", true, true, true},
    {"rcs", true, true, false},
    {"rrcs", true, true, true},
    {"cpy", false, false, false},
    {"re", false, false, true},
    {"nop", false, false, false},
};
static_assert(std::size(kindTraits) == static_cast<std::size_t>(ProgramOpKind::Nop) + 1);

const KindTraits& traitsOf(ProgramOpKind kind)
{
    return kindTraits[static_cast<std::size_t>(kind)];
}

} // namespace

const char* mscclName(ProgramOpKind kind)
{
    return traitsOf(kind).name.data();
}

std::optional<ProgramOpKind> opKindFromMscclName(std::string_view name)
{
    for (std::size_t index = 0; index < std::size(kindTraits); ++index)
        if (name == kindTraits[index].name)
            return static_cast<ProgramOpKind>(index);
    return std::nullopt;
}

const char* mscclName(ProgramBuffer buffer)
{
    switch (buffer) {
    case ProgramBuffer::Input:
        return "i";
    case ProgramBuffer::Output:
        return "o";
    case ProgramBuffer::Scratch:
        return "s";
    }
    return "?";
}

std::optional<ProgramBuffer> bufferFromMscclName(std::string_view name)
{
    if (name.size() != 1)
        return std::nullopt;
    switch (name[0]) {
    case 'i':
        return ProgramBuffer::Input;
    case 'o':
        return ProgramBuffer::Output;
    case 's':
        return ProgramBuffer::Scratch;
    default:
        return std::nullopt;
    }
}

const char* mscclCollectiveName(CollectiveType type)
{
    switch (type) {
    case CollectiveType::AllReduce:
        return "allreduce";
    case CollectiveType::AllGather:
        return "allgather";
    case CollectiveType::ReduceScatter:
        return "reduce_scatter";
    case CollectiveType::AllToAll:
        return "alltoall";
    default:
        return nullptr;
    }
}

std::optional<CollectiveType> collectiveFromMscclName(std::string_view name)
{
    for (CollectiveType type : {CollectiveType::AllReduce,
                                CollectiveType::AllGather,
                                CollectiveType::ReduceScatter,
                                CollectiveType::AllToAll})
        if (name == mscclCollectiveName(type))
            return type;
    if (name == "reducescatter")
        return CollectiveType::ReduceScatter;
    return std::nullopt;
}

bool receives(ProgramOpKind kind)
{
    return traitsOf(kind).receives;
}

bool sends(ProgramOpKind kind)
{
    return traitsOf(kind).sends;
}

bool reduces(ProgramOpKind kind)
{
    return traitsOf(kind).reduces;
}

OpDeps& OpDeps::operator=(const OpDeps& other)
{
    if (this == &other)
        return *this;
    local = other.local;
    count = other.count;
    capacity = other.capacity;
    heap.reset();
    if (other.heap) {
        heap = std::make_unique<std::uint32_t[]>(other.capacity);
        std::copy(other.begin(), other.end(), heap.get());
    }
    return *this;
}

void OpDeps::push_back(std::uint32_t dep)
{
    if (count == capacity) {
        auto grown = std::make_unique<std::uint32_t[]>(2 * capacity);
        std::copy(begin(), end(), grown.get());
        heap = std::move(grown);
        capacity *= 2;
    }
    (heap ? heap.get() : local.data())[count++] = dep;
}

std::string CollectiveProgram::where(std::uint32_t rank, std::uint32_t op) const
{
    const ProgramOp& at = ranks[rank].ops[op];
    const std::string kind = mscclName(at.kind);
    switch (origin) {
    case ProgramOrigin::Msccl:
        return source + ":" + std::to_string(at.origin) + " (gpu " + std::to_string(rank) + " tb " +
               std::to_string(at.threadblock) + " step " + std::to_string(at.step) + " " + kind +
               ")";
    case ProgramOrigin::Chakra:
        return source + "." + std::to_string(rank) + ".et node " + std::to_string(at.origin) +
               " (" + ranks[rank].names.substr(at.nameBegin, at.nameSize) + ")";
    case ProgramOrigin::Generated:
        break;
    }
    return source + " gpu " + std::to_string(rank) + " op " + std::to_string(at.origin) + " (" +
           kind + ")";
}

} // namespace etsim::net
