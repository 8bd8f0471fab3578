#include "kernel/OpenFileLimit.h"

#include <algorithm>
#include <sys/resource.h>

namespace etsim {

namespace {

// Linux refuses a soft limit above fs.nr_open, 2^20 unless raised by the administrator.
constexpr rlim_t highestRequested = rlim_t{1} << 20;

} // namespace

std::size_t openFileLimit(std::size_t fallback)
{
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
        return fallback;
    return static_cast<std::size_t>(limit.rlim_cur);
}

std::size_t raiseOpenFileLimit()
{
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
        rlim_t wanted = std::min(limit.rlim_max, highestRequested);
        if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
            rlimit raised = limit;
            raised.rlim_cur = wanted;
            // Refused (a container's seccomp, a lower nr_open): the old limit stays, which is
            // only slower for traces of very many ranks, never wrong.
            ::setrlimit(RLIMIT_NOFILE, &raised);
        }
    }
    return openFileLimit();
}

} // namespace etsim
