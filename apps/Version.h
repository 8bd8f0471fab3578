#pragma once
// The version etsim reports (--version, run reports, sweeps): the CMake project version,
// passed in by apps/CMakeLists.txt.

namespace etsim::apps {

inline constexpr const char* etsimVersion = ETSIM_VERSION;

} // namespace etsim::apps
