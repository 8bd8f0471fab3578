#pragma once
// A collective algorithm given as a CollectiveProgram (MSCCL XML or Chakra algorithm traces),
// timed by the same step engine as the built-in algorithms.
//
// Each rank's operations are placed on its step sequence by their dependencies: a step sends
// its messages at its start and ends when its receives have arrived (plus the endpoint delay
// and the cost of its reductions). A sending operation goes into the first step that starts
// after its dependencies are done; a receiving one into the step in which its dependencies
// end (so consecutive receives share a step), and the send of rrs/rcs/rrcs into the step
// after its receive. Reductions (rrc, rrs, rrcs, re) are priced at the end of their step.
// Threadblocks therefore run concurrently but advance step by step together: an operation
// waits for the step of its rank to end, not only for its own predecessors. A rank with fewer
// steps than the longest one idles through empty steps at the end (one endpoint delay each).
//
// Message bytes: count chunks of (the phase's per-member input / input chunks), or the fixed
// size a plain Chakra trace gives. The program is verified (ProgramVerifier) on construction.

#include "models/net/collectives/CollectiveAlgorithmIf.h"
#include "models/net/collectives/CollectiveProgram.h"

#include <memory>
#include <string>
#include <vector>

namespace etsim::net {

class CustomAlgorithm final : public CollectiveAlgorithmIf {
public:
    /// Verifies and compiles `program`; throws etsim::Error naming the program's source.
    explicit CustomAlgorithm(std::shared_ptr<const CollectiveProgram> program);

    const char* name() const override { return label.c_str(); }
    AlgorithmKind kind() const override { return AlgorithmKind::Custom; }
    void check(const PhaseShape& shape) const override;
    std::uint32_t stepCount(const PhaseShape& shape) const override;
    void plan(const PhaseShape& shape,
              std::uint32_t member,
              std::uint32_t step,
              StepPlan& plan) const override;

    const CollectiveProgram& program() const { return *source; }

private:
    struct Message {
        std::uint32_t peer = 0;
        std::uint32_t count = 0;
        std::uint64_t fixedBytes = 0;
        std::uint32_t peerStep = 0;
    };
    struct Step {
        std::vector<Message> sends;
        std::uint32_t receives = 0;
        std::uint32_t reducedChunks = 0;
    };

    std::shared_ptr<const CollectiveProgram> source;
    std::string label;
    std::vector<std::vector<Step>> steps; // [member][step]
    std::uint32_t longest = 0;
};

} // namespace etsim::net
