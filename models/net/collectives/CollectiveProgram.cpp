#include "models/net/collectives/CollectiveProgram.h"

namespace etsim::net {

const char* mscclName(ProgramOpKind kind)
{
    switch (kind) {
    case ProgramOpKind::Send:
        return "s";
    case ProgramOpKind::Recv:
        return "r";
    case ProgramOpKind::RecvReduceCopy:
        return "rrc";
    case ProgramOpKind::RecvReduceSend:
        return "rrs";
    case ProgramOpKind::RecvCopySend:
        return "rcs";
    case ProgramOpKind::RecvReduceCopySend:
        return "rrcs";
    case ProgramOpKind::Copy:
        return "cpy";
    case ProgramOpKind::Reduce:
        return "re";
    case ProgramOpKind::Nop:
        return "nop";
    }
    return "?";
}

std::optional<ProgramOpKind> opKindFromMscclName(std::string_view name)
{
    constexpr ProgramOpKind all[] = {
        ProgramOpKind::Send,
        ProgramOpKind::Recv,
        ProgramOpKind::RecvReduceCopy,
        ProgramOpKind::RecvReduceSend,
        ProgramOpKind::RecvCopySend,
        ProgramOpKind::RecvReduceCopySend,
        ProgramOpKind::Copy,
        ProgramOpKind::Reduce,
        ProgramOpKind::Nop,
    };
    for (ProgramOpKind kind : all)
        if (name == mscclName(kind))
            return kind;
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
    for (ProgramBuffer buffer :
         {ProgramBuffer::Input, ProgramBuffer::Output, ProgramBuffer::Scratch})
        if (name == mscclName(buffer))
            return buffer;
    return std::nullopt;
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
    switch (kind) {
    case ProgramOpKind::Recv:
    case ProgramOpKind::RecvReduceCopy:
    case ProgramOpKind::RecvReduceSend:
    case ProgramOpKind::RecvCopySend:
    case ProgramOpKind::RecvReduceCopySend:
        return true;
    default:
        return false;
    }
}

bool sends(ProgramOpKind kind)
{
    switch (kind) {
    case ProgramOpKind::Send:
    case ProgramOpKind::RecvReduceSend:
    case ProgramOpKind::RecvCopySend:
    case ProgramOpKind::RecvReduceCopySend:
        return true;
    default:
        return false;
    }
}

bool reduces(ProgramOpKind kind)
{
    switch (kind) {
    case ProgramOpKind::RecvReduceCopy:
    case ProgramOpKind::RecvReduceSend:
    case ProgramOpKind::RecvReduceCopySend:
    case ProgramOpKind::Reduce:
        return true;
    default:
        return false;
    }
}

} // namespace etsim::net
