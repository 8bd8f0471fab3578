#pragma once
// The process's limit on open file descriptors (RLIMIT_NOFILE), for readers that stream many
// files side by side (et::TraceSet keeps one descriptor per rank it reads).

#include <cstddef>

namespace etsim {

// The current soft limit; `fallback` when it cannot be read or is unlimited.
std::size_t openFileLimit(std::size_t fallback = 1024);

// Raises the soft limit to the hard one (at most 2^20, what Linux accepts by default) and
// returns the soft limit then in force. Changing a process-wide limit is for programs that own
// their process, such as the etsim command; a library embedded in someone's sc_main should only
// read the limit.
std::size_t raiseOpenFileLimit();

} // namespace etsim
