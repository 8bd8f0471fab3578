#include "cosim/NodeInfoWire.h"

namespace etsim::cosim {

WireNodeInfo toWire(const EtNodeInfo& info)
{
    WireNodeInfo wire;
    wire.rank = static_cast<std::uint32_t>(info.rank);
    wire.node = static_cast<std::uint64_t>(info.node);
    wire.kind = static_cast<std::uint8_t>(info.kind);
    wire.onHost = info.onHost;
    wire.bytes = info.bytes;
    wire.flops = info.flops;
    wire.collective = static_cast<std::uint8_t>(info.collective);
    if (info.peer)
        wire.peer = static_cast<std::uint32_t>(*info.peer);
    wire.tag = info.tag;
    if (info.group)
        wire.group = static_cast<std::uint32_t>(*info.group);
    if (info.groupRanks) {
        std::vector<std::uint32_t> ranks;
        ranks.reserve(info.groupRanks->size());
        for (RankId rank : *info.groupRanks)
            ranks.push_back(static_cast<std::uint32_t>(rank));
        wire.groupRanks = std::move(ranks);
    }
    wire.groupSequence = info.groupSequence;
    wire.involvedDims = info.involvedDims;
    wire.durationPs = info.durationPs;
    wire.dataType = static_cast<std::uint8_t>(info.dataType);
    wire.op = static_cast<std::uint8_t>(info.op);
    wire.reduceOp = static_cast<std::uint8_t>(info.reduceOp);
    if (info.gemm)
        wire.gemm = WireNodeInfo::Gemm{info.gemm->m, info.gemm->n, info.gemm->k, info.gemm->batch};
    for (const NodeAttribute& attribute : info.attributes) {
        WireNodeInfo::Attribute out;
        out.key = attribute.key;
        std::visit([&](const auto& value) { out.value = value; }, attribute.value);
        wire.attributes.push_back(std::move(out));
    }
    return wire;
}

EtNodeInfo fromWire(const WireNodeInfo& wire)
{
    EtNodeInfo info;
    info.rank = RankId{wire.rank};
    info.node = NodeId{wire.node};
    info.kind = static_cast<NodeKind>(wire.kind);
    info.onHost = wire.onHost;
    info.bytes = wire.bytes;
    info.flops = wire.flops;
    info.collective = static_cast<CollectiveType>(wire.collective);
    if (wire.peer)
        info.peer = RankId{*wire.peer};
    info.tag = wire.tag;
    if (wire.group)
        info.group = ProcessGroupId{*wire.group};
    if (wire.groupRanks) {
        auto ranks = std::make_shared<std::vector<RankId>>();
        for (std::uint32_t rank : *wire.groupRanks)
            ranks->push_back(RankId{rank});
        info.groupRanks = std::move(ranks);
    }
    info.groupSequence = wire.groupSequence;
    info.involvedDims = wire.involvedDims;
    info.durationPs = wire.durationPs;
    info.dataType = static_cast<DataType>(wire.dataType);
    info.op = static_cast<OperatorKind>(wire.op);
    info.reduceOp = static_cast<ReduceOp>(wire.reduceOp);
    if (wire.gemm)
        info.gemm = GemmShape{wire.gemm->m, wire.gemm->n, wire.gemm->k, wire.gemm->batch};
    for (const WireNodeInfo::Attribute& attribute : wire.attributes) {
        NodeAttribute out;
        out.key = attribute.key;
        std::visit([&](const auto& value) { out.value = value; }, attribute.value);
        info.attributes.push_back(std::move(out));
    }
    return info;
}

} // namespace etsim::cosim
