#pragma once
// Loads the custom algorithms a fabric configuration lists ({msccl: FILE} or {chakra: PREFIX}),
// verifying each
// (the same check as `etsim collective verify`), before the fabric is built.

#include "models/net/NetConfig.h"

#include <memory>

namespace etsim::platform {

/// Reads one program file; throws etsim::Error naming the file and element.
std::shared_ptr<const net::CollectiveAlgorithmIf>
loadCustomAlgorithm(const net::CustomAlgorithmSource& source);

/// Fills every source's algorithm; throws ConfigError at the list entry that names a file
/// that cannot be read or verified.
void loadCustomAlgorithms(net::NetConfig& config);

} // namespace etsim::platform
