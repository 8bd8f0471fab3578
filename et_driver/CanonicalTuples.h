#pragma once
// The tensor tuples of an IOInfo written the way Python's str() and `etsim gen` write them, read
// with one pass over the text: NodeTensors.cpp reads them for every compute and memory node,
// and its general scan (the PyLiteral grammar's events) cost more than the rest of a node's
// lowering. Only the canonical rendering is taken:
//
//   values  [] or [[id, storage, offset, num_elem, elem_bytes, 'device'], ...]
//   types   empty, [] or ['type', ...]
//
// with ", " between items, decimal integers of at most 18 digits (an optional '-' before),
// single-quoted text without backslashes, and no other blanks. For such text the tensors are
// those the general scan finds. Anything else, and any tuple the general scan would refuse
// (a negative entry, bytes beyond 2^64), is left to the general scan, which also gives the
// error.

#include "kernel/NodeInfo.h"

#include <string_view>
#include <vector>

namespace etsim::et {

/// Appends to `out` the tensors of `values` whose argument `types` names a Tensor (every one
/// when `types` is empty), leaving out tensors of 0 bytes; false, with `out` unspecified, when
/// the text is not in the canonical rendering above.
bool readCanonicalTuples(std::string_view values,
                         std::string_view types,
                         std::vector<TensorUse>& out);

} // namespace etsim::et
