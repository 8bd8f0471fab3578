#pragma once
// Two connected in-process transports, for tests: bytes written to one are read from the other.

#include "cosim/transport/Transport.h"

#include <memory>
#include <utility>

namespace etsim::cosim {

/// Returns both ends of a fresh in-memory stream.
std::pair<std::unique_ptr<Transport>, std::unique_ptr<Transport>> makeMemoryPair();

} // namespace etsim::cosim
