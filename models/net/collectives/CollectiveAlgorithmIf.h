#pragma once
// A collective algorithm turns one phase of a collective (one collective type on a group of
// p members, d bytes of input per member) into steps of messages. Every member runs its own
// step sequence: at the start of step s it sends the step's messages, then waits until the
// messages the step needs have arrived; the next step begins only after that (plus the
// configured endpoint delay and reduction cost). There is no barrier between members: the
// data dependencies between steps are exactly the messages.
//
// Each message names the step of the receiver it counts towards, so algorithms whose members
// play different roles (trees) express "receive from the children, then send to the parent".

#include "kernel/NodeInfo.h"

#include <cstdint>
#include <vector>

namespace etsim::net {

/// One phase as an algorithm sees it.
struct PhaseShape {
    CollectiveType type = CollectiveType::AllReduce;
    /// Members in the phase's group (>= 2).
    std::uint32_t size = 0;
    /// Per-member input of this phase, B (Chakra convention: all-gather input is the part
    /// each member contributes).
    std::uint64_t inputBytes = 0;
    /// Distinguishes the chunks of one collective (double binary tree alternates trees).
    std::uint32_t variant = 0;
    /// Send the other way round a ring (ASTRA-sim's all-gather direction in multi-dim runs).
    bool reverse = false;
};

/// A message of one step: to member `peer` (index in the phase group), counted by the peer in
/// its step `peerStep`.
struct StepSend {
    std::uint32_t peer = 0;
    std::uint64_t bytes = 0;
    std::uint32_t peerStep = 0;
};

/// What one member does in one step.
struct StepPlan {
    std::vector<StepSend> sends;
    /// Messages that must have arrived before the step ends.
    std::uint32_t receives = 0;
    /// Bytes reduced when the step ends (priced at the local memory bandwidth).
    std::uint64_t reducedBytes = 0;
    /// In-switch reduction: the member contributes switchBytes to its switch line's reduction,
    /// which the engine starts once every member of the line has contributed; the reduced
    /// result comes back as one of `receives`.
    bool inSwitch = false;
    std::uint64_t switchBytes = 0;

    void clear()
    {
        sends.clear();
        receives = 0;
        reducedBytes = 0;
        inSwitch = false;
        switchBytes = 0;
    }
};

class CollectiveAlgorithmIf {
public:
    virtual ~CollectiveAlgorithmIf() = default;

    /// The configuration name ("ring").
    virtual const char* name() const = 0;
    /// Throws etsim::Error saying why the algorithm cannot run `shape` and what to use
    /// instead (unsupported type, group size).
    virtual void check(const PhaseShape& shape) const = 0;
    /// Steps every member of the phase runs (the same for all members).
    virtual std::uint32_t stepCount(const PhaseShape& shape) const = 0;
    /// Fills `plan` (cleared by the caller) for `member`'s step `step`.
    virtual void plan(const PhaseShape& shape,
                      std::uint32_t member,
                      std::uint32_t step,
                      StepPlan& plan) const = 0;
};

/// Per-member output of a phase: input / p for reduce-scatter, input * p for all-gather,
/// the input otherwise.
std::uint64_t phaseOutputBytes(const PhaseShape& shape);

} // namespace etsim::net
