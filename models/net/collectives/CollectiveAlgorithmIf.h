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
#include "models/net/NetConfig.h"

#include <cstdint>
#include <utility>
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
    /// In-switch step: the member contributes switchBytes to its switch line; the algorithm's
    /// switchStreams() say what then streams through the switch (what comes back counts among
    /// `receives`).
    bool inSwitch = false;
    std::uint64_t switchBytes = 0;
    /// The streams start once every member of the line has contributed (a reduction needs all
    /// inputs); false: each member's contribution starts its own streams at once.
    bool waitForLine = false;

    /// Appends a send. The fields are written where the send is stored: a StepSend built
    /// aside and copied in is read back wider than it was written, which stalls the store
    /// forwarding of every message's plan.
    void addSend(std::uint32_t peer, std::uint64_t bytes, std::uint32_t peerStep)
    {
        StepSend& send = sends.emplace_back();
        send.peer = peer;
        send.bytes = bytes;
        send.peerStep = peerStep;
    }

    void clear()
    {
        sends.clear();
        receives = 0;
        reducedBytes = 0;
        inSwitch = false;
        switchBytes = 0;
        waitForLine = false;
    }
};

/// One stream through a switch line, at one rate on every link it crosses. Members are
/// positions in the phase group. Either `pairs` (whole routes, source -> destination:
/// NetworkCore::sendStream) or `sources` and `destinations` (the way up from each source and
/// the way down to each destination: NetworkCore::sendSwitchStream).
struct SwitchStream {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    std::vector<std::uint32_t> sources;
    std::vector<std::uint32_t> destinations;
    std::uint64_t bytes = 0;
    /// Its arrival counts towards the step of `receiver`, or, with `multicast`, of every member
    /// of the line.
    std::uint32_t receiver = 0;
    bool multicast = false;
};

class CollectiveAlgorithmIf {
public:
    virtual ~CollectiveAlgorithmIf() = default;

    /// The configuration name ("ring").
    virtual const char* name() const = 0;
    /// Which algorithm it is: what per-algorithm settings (step and base latency) are looked
    /// up by; Custom for a program read from a file.
    virtual AlgorithmKind kind() const = 0;
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
    /// In-switch steps (StepPlan::inSwitch): the streams that start when `member`'s
    /// contribution of `bytes` completes what the step waits for (the last of the line with
    /// waitForLine, else its own), appended to `streams`.
    virtual void switchStreams(const PhaseShape& /*shape*/,
                               std::uint32_t /*member*/,
                               std::uint64_t /*bytes*/,
                               std::vector<SwitchStream>& /*streams*/) const
    {
    }
    /// True when the phase is admitted by a queue of its own in each dimension, so that it runs
    /// beside the other phases of later chunks instead of after them.
    virtual bool ownQueue(const PhaseShape& /*shape*/) const { return false; }
};

/// Per-member output of a phase: input / p for reduce-scatter, input * p for all-gather,
/// the input otherwise.
std::uint64_t phaseOutputBytes(const PhaseShape& shape);

} // namespace etsim::net
