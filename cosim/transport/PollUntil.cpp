#include "cosim/transport/PollUntil.h"

#include <cerrno>
#include <ctime>

namespace etsim::cosim {

bool pollUntil(pollfd* fds, nfds_t count, Transport::Deadline deadline)
{
    while (true) {
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero())
            return false;
        const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        const timespec wait{static_cast<time_t>(nanos / 1000000000),
                            static_cast<long>(nanos % 1000000000)};
        const int ready = ::ppoll(fds, count, &wait, nullptr);
        if (ready > 0)
            return true;
        if (ready < 0 && errno != EINTR)
            return true; // let the caller's next read or write report the error
    }
}

} // namespace etsim::cosim
