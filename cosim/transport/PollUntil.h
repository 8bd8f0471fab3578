#pragma once
// poll(2) with an absolute deadline, for the transports' waitIo.

#include "cosim/transport/Transport.h"

#include <poll.h>

namespace etsim::cosim {

/// Waits until one of `fds` has an event or `deadline` passes (retrying on EINTR); false on
/// the deadline. Events are left in each pollfd's revents.
bool pollUntil(pollfd* fds, nfds_t count, Transport::Deadline deadline);

} // namespace etsim::cosim
