#include "tests/workloads/WorkloadTestSupport.h"

#include "et_driver/NodeTensors.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace etsim::workloads::test {

void MemorySink::beginRank(uint32_t rank)
{
    current = rank;
    ranks[rank];
}

void CountingSink::node(const et::TraceNode& node)
{
    ++nodes;
    flops += static_cast<double>(node.numOps().value_or(0));
}

TransformerSpec smallDense()
{
    TransformerSpec spec;
    spec.model.layers = 2;
    spec.model.hidden = 256;
    spec.model.heads = 4;
    spec.model.ffn = 1024;
    spec.model.vocab = 32000;
    spec.seqLen = 64;
    return spec;
}

NodeTensors tensorsOf(const et::TraceNode& node)
{
    std::optional<NodeTensors> tensors = et::nodeTensors(node);
    return tensors ? *tensors : NodeTensors{};
}

MemorySink generateAll(const Workload& workload)
{
    MemorySink sink;
    generate(workload, sink);
    return sink;
}

et::TraceNode find(const MemorySink& sink, uint32_t rank, const std::string& name)
{
    auto it = sink.ranks.find(rank);
    if (it != sink.ranks.end())
        for (const et::TraceNode& node : it->second)
            if (node.name == name)
                return node;
    ADD_FAILURE() << "rank " << rank << " has no node \"" << name << "\"";
    return {};
}

et::ValidationReport writeAndValidate(const Workload& workload, const std::filesystem::path& folder)
{
    WriteOptions options;
    options.folder = folder;
    options.name = "job";
    WriteSummary summary = writeWorkload(workload, options);
    et::ValidatorOptions validatorOptions;
    validatorOptions.commGroups = et::readCommGroupFile(summary.commGroupFile);
    et::ValidationReport withFile = et::TraceValidator(validatorOptions).validate(summary.prefix);
    // The METADATA_NODEs alone must also resolve every group.
    et::ValidationReport alone = et::TraceValidator().validate(summary.prefix);
    EXPECT_EQ(alone.errors, 0U) << findingsText(alone);
    EXPECT_EQ(alone.warnings, 0U) << findingsText(alone);
    return withFile;
}

std::string findingsText(const et::ValidationReport& report)
{
    std::string text;
    for (const et::Finding& f : report.findings)
        text += f.text() + "\n";
    return text;
}

void messages(const MemorySink& sink, std::vector<Message>& sends, std::vector<Message>& recvs)
{
    for (const auto& [rank, nodes] : sink.ranks)
        for (const et::TraceNode& node : nodes) {
            if (node.type != et::NodeType::CommSend && node.type != et::NodeType::CommRecv)
                continue;
            Message m{node.commSrc().value_or(-1),
                      node.commDst().value_or(-1),
                      node.commTag().value_or(-1),
                      node.commSize().value_or(-1)};
            // A rank only sends as itself and receives as itself.
            int32_t self = node.type == et::NodeType::CommSend ? std::get<0>(m) : std::get<1>(m);
            EXPECT_EQ(self, static_cast<int32_t>(rank)) << node.name;
            (node.type == et::NodeType::CommSend ? sends : recvs).push_back(m);
        }
    std::sort(sends.begin(), sends.end());
    std::sort(recvs.begin(), recvs.end());
}

} // namespace etsim::workloads::test
