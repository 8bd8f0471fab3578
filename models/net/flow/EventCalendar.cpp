#include "models/net/flow/EventCalendar.h"

#include "kernel/Error.h"

#include <string>

namespace etsim::net {

void EventCalendar::failOverflow(std::uint64_t wrappedPs) const
{
    throw Error("fabric: at " + std::to_string(nowPs) + " ps a transfer or delay would end " +
                std::to_string(wrappedPs) +
                " ps past the end of the simulated clock (2^64 ps, about 213 days); a size or a "
                "bandwidth (or latency) of the platform is far outside the range of real "
                "hardware: check comm_size and the link bandwidths");
}

} // namespace etsim::net
