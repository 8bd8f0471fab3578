#pragma once
// Transparent huge pages for the heap of a long run.
//
// A run of a thousand ranks keeps each rank's state (its trace window, dependency slots,
// accelerator and plan caches) in its own corner of a heap of hundreds of MiB, and visits the
// ranks in turn, so nearly every visit misses the TLB as well as the cache. On a kernel whose
// transparent huge pages are given only where asked (`madvise`, the default of Debian and
// most distributions), glibc's malloc asks for them only when its tunable
// glibc.malloc.hugetlb=1 is set, and glibc reads its tunables only when a program starts. So
// the etsim command, which owns its process, starts itself again with the tunable added
// (bench/README.md, "Huge pages for the heap", measures what it gains). A library embedded in
// someone's sc_main only reports the setting.

#include <optional>
#include <string>
#include <string_view>

namespace etsim {

/// The environment variable that turns the re-execution off when set to 0.
inline constexpr const char* hugePagesVariable = "ETSIM_HUGE_PAGES";
/// The kernel file giving the transparent huge page mode, such as "always [madvise] never".
inline constexpr const char* thpModeFile = "/sys/kernel/mm/transparent_hugepage/enabled";

/// The GLIBC_TUNABLES value adding glibc.malloc.hugetlb=1 to `current` (null when unset), or
/// nullopt when `current` already sets glibc.malloc.hugetlb, to whatever value: the user's
/// choice, or the mark of an earlier re-execution.
std::optional<std::string> tunablesWithHugePages(const char* current);

/// The mode marked in the text of thpModeFile ("madvise" of "always [madvise] never"), or ""
/// when none is. Only in mode madvise does malloc's asking change anything.
std::string thpModeOf(std::string_view modeText);

/// The kernel's mode now (thpModeOf of thpModeFile), or "" when it cannot be read.
std::string thpMode();

/// Why this process's malloc does or does not ask for huge pages, in a few words for reports:
/// "asked (glibc.malloc.hugetlb=1)", "not asked (ETSIM_HUGE_PAGES=0)", ...
std::string heapHugePagesState();

/// Starts this program again (/proc/self/exe, same arguments) with glibc.malloc.hugetlb=1 added
/// to GLIBC_TUNABLES, when the kernel gives huge pages only where asked and nothing says
/// otherwise: ETSIM_HUGE_PAGES=0, a GLIBC_TUNABLES that already sets the tunable, or Valgrind
/// (whose tools would not follow the new program). Returns only when it does not restart,
/// including when the exec fails; call it first thing in main(), before any thread starts.
void restartWithHugePages(char** argv);

} // namespace etsim
