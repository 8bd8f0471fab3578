#pragma once
// The shared-memory transport for a peer on the same machine (endpoint "shm:/path"). The Unix
// socket carries only the hand-over: the host creates a memfd holding two single-producer,
// single-consumer byte rings (host to peer, peer to host) and four eventfds, and sends them
// with SCM_RIGHTS (cosim/PROTOCOL.md, section 7). From then on every frame, HELLO included,
// goes through the rings. A waiting side spins briefly (FrameLink::wait), then sets a
// "waiting" flag in the ring and blocks in poll on the eventfd, so two processes on two cores
// do not starve each other; the other side signals the eventfd only when that flag is set.
// The socket stays open: when the peer dies, it reports the end of the stream to the poll, so
// a dead peer is noticed as fast as on a plain socket.

#include "cosim/transport/Transport.h"

#include <chrono>
#include <cstddef>
#include <memory>

namespace etsim::cosim {

/// Bytes of each ring (a power of two, at least 4096).
inline constexpr std::size_t defaultRingBytes = 256 * 1024;

/// Host side: creates the rings, hands them over on `socket` (a connected Unix-socket
/// transport) and returns the ring transport, which keeps the socket to watch the peer.
/// Throws CosimError naming the endpoint and the failing step.
std::unique_ptr<Transport> offerSharedMemory(std::unique_ptr<Transport> socket,
                                             std::size_t ringBytes = defaultRingBytes);

/// Peer side: waits up to `timeout` for the host's hand-over on `socket` and maps the rings.
/// Throws CosimError on a timeout or a malformed hand-over.
std::unique_ptr<Transport> acceptSharedMemory(std::unique_ptr<Transport> socket,
                                              std::chrono::milliseconds timeout);

} // namespace etsim::cosim
