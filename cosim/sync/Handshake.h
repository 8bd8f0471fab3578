#pragma once
// The host's side of HELLO and CONFIG (cosim/PROTOCOL.md, section 3). SystemC-free.

#include "cosim/transport/FrameLink.h"
#include "cosim/wire/Messages.h"

#include <chrono>
#include <string>

namespace etsim::cosim {

/// Sends our HELLO, checks the peer's (major version, requested sync mode among its
/// capabilities), then sends CONFIG with `configText` and waits for its acknowledgement.
/// Returns the peer's HELLO (and names the link after it). Throws CosimError with the reason,
/// quoting a peer's ERROR text.
Hello handshakeAsHost(FrameLink& link,
                      const Hello& ours,
                      const std::string& configText,
                      std::chrono::milliseconds timeout);

/// A frame that must come next during a handshake; throws on timeout, ERROR or another type.
Frame expectFrame(FrameLink& link,
                  MessageType type,
                  std::chrono::milliseconds timeout,
                  const char* waitingFor);

/// "1.0"
std::string versionText(std::uint8_t major, std::uint8_t minor);

} // namespace etsim::cosim
