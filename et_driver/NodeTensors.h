#pragma once
// The tensors a node reads and writes, by identity: the tensor tuples of Chakra's Node.inputs
// and Node.outputs (spec 2.3, 2.4). A tuple is `[tensor_id, storage_id, offset, num_elem,
// elem_bytes, device]`; it may sit inside nested lists (a GenericList[Tensor] argument). Only
// arguments whose type names a Tensor are read when the types are given; without types every
// list of that form counts. The accelerator's on-chip residency model keys on tensor_id
// (docs/accel.md, On-chip memory), and `etsim gen` writes these tuples for its compute nodes.

#include "et_driver/TraceNode.h"
#include "kernel/NodeInfo.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace etsim::et {

// The node's tensors; nullopt when neither inputs nor outputs name a tensor (or their text
// does not parse). Tensors of 0 bytes are left out. Throws etsim::Error, naming the tuple,
// when num_elem × elem_bytes overflows 64 bits or an entry is negative.
std::optional<NodeTensors> nodeTensors(const TraceNode& node);
// The same into `out`, over its buffers (the driver reads every node into recycled ones);
// false, with `out` empty, where the above gives nullopt.
bool nodeTensors(const TraceNode& node, NodeTensors& out);
// The same, read through PyValue trees and protobuf's parse of the preserved bytes: the
// reference nodeTensors() falls back on for what its scan does not take (and that tests
// compare it with).
std::optional<NodeTensors> nodeTensorsFromTrees(const TraceNode& node);

// Sets Node.inputs and Node.outputs to the tuples of `inputs` and `outputs` (storage_id =
// tensor_id, offset 0, num_elem = bytes / elementBytes), with shapes `[[num_elem]]` and each
// type the PyTorch type string `type` (e.g. "Tensor(c10::BFloat16)"), in the PyTorch
// converter's rendering. Throws etsim::Error for an `elementBytes` of 0.
void setNodeTensors(TraceNode& node,
                    const std::vector<TensorUse>& inputs,
                    const std::vector<TensorUse>& outputs,
                    std::uint64_t elementBytes,
                    const std::string& type);

} // namespace etsim::et
