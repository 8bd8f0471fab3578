#pragma once
// Helpers for the generator tests: keep every node of every rank in memory, validate written
// traces, and pair sends with receives across ranks.

#include "et_driver/TraceValidator.h"
#include "workloads/Transformer.h"
#include "workloads/Workload.h"

#include <filesystem>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace etsim::workloads::test {

// Keeps every node (small workloads only).
class MemorySink : public NodeSink {
public:
    void beginRank(uint32_t rank) override;
    void node(const et::TraceNode& node) override { ranks[current].push_back(node); }
    void endRank() override {}

    std::map<uint32_t, std::vector<et::TraceNode>> ranks;

private:
    uint32_t current = 0;
};

// Counts nodes and sums num_ops only (for large workloads).
class CountingSink : public NodeSink {
public:
    void beginRank(uint32_t) override { ++rankCount; }
    void node(const et::TraceNode& node) override;
    void endRank() override {}

    uint32_t rankCount = 0;
    uint64_t nodes = 0;
    double flops = 0;
};

MemorySink generateAll(const Workload& workload);

// A quarter-size dense model (2 layers, hidden 256, 4 heads of 64, FFN 1024, vocabulary 32000)
// on one 64-token sequence, one rank, bf16, for tests that count bytes by hand.
TransformerSpec smallDense();

// The node named `name` on `rank`; fails the test (and returns an empty node) if absent.
et::TraceNode find(const MemorySink& sink, uint32_t rank, const std::string& name);

// The tensors a node names in its inputs and outputs; empty lists when it names none.
NodeTensors tensorsOf(const et::TraceNode& node);

// Writes the workload into `folder` and validates the written files, with the group file.
et::ValidationReport writeAndValidate(const Workload& workload,
                                      const std::filesystem::path& folder);

// Every error and warning finding as text, for failure messages.
std::string findingsText(const et::ValidationReport& report);

// (src, dst, tag, bytes) of every send and of every receive, sorted. Equal lists mean every
// message has exactly one matching receive.
using Message = std::tuple<int32_t, int32_t, int32_t, int64_t>;
void messages(const MemorySink& sink, std::vector<Message>& sends, std::vector<Message>& recvs);

} // namespace etsim::workloads::test
