#pragma once
// Where the real Chakra traces shared by the team are, for tests that run them.

#include <filesystem>
#include <optional>

namespace etsim::test {

// $ETSIM_TRACES when set and not empty, else $ETSIM_SOURCE_DIR/../shared/traces (CTest sets
// ETSIM_SOURCE_DIR); nullopt when that folder does not exist, so the caller can GTEST_SKIP.
std::optional<std::filesystem::path> sharedTraces();

// The team's reference data: $ETSIM_REFERENCE, else $ETSIM_SOURCE_DIR/../shared/reference;
// nullopt when absent.
std::optional<std::filesystem::path> sharedReference();

} // namespace etsim::test
