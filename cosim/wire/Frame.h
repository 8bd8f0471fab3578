#pragma once
// The frame of the co-simulation wire protocol (cosim/PROTOCOL.md, section 1): a fixed 32-byte
// little-endian header followed by the payload. SystemC-free: the peer library uses it too.

#include "kernel/Error.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace etsim::cosim {

/// A co-simulation failure: malformed frame, protocol violation, dead or stalled peer.
class CosimError : public Error {
public:
    using Error::Error;
};

/// Protocol version this code speaks.
inline constexpr std::uint8_t protocolMajor = 1;
// 1.1 added response status 6 (byte-enable error); 1.2 a text on the peer's TERMINATE answer.
inline constexpr std::uint8_t protocolMinor = 2;
/// "ETSC" read as a little-endian u32.
inline constexpr std::uint32_t frameMagic = 0x43535445;
inline constexpr std::size_t headerSize = 32;
/// Timestamp meaning "never" / "unlimited", ps.
inline constexpr std::uint64_t unlimitedPs = ~std::uint64_t{0};

enum class MessageType : std::uint8_t {
    Hello = 1,
    Config = 2,
    Request = 3,
    Response = 4,
    Grant = 5,
    Terminate = 6,
    Error = 7,
};
const char* toString(MessageType type);

namespace frameflags {
inline constexpr std::uint8_t response = 0x01;
inline constexpr std::uint8_t posted = 0x02;
inline constexpr std::uint8_t known = response | posted;
} // namespace frameflags

struct FrameHeader {
    std::uint8_t major = protocolMajor;
    std::uint8_t minor = protocolMinor;
    MessageType type = MessageType::Hello;
    std::uint8_t flags = 0;
    std::uint32_t channel = 0;
    std::uint32_t payloadLength = 0;
    std::uint64_t requestId = 0;
    std::uint64_t timestampPs = 0;
};

struct Frame {
    FrameHeader header;
    std::vector<std::uint8_t> payload;
};

/// Limits a receiver enforces before allocating anything.
struct Limits {
    static constexpr std::uint32_t defaultMaxPayload = 1u << 20;
    /// Largest payload accepted, bytes.
    std::uint32_t maxPayload = defaultMaxPayload;
};

/// Writes `header` into 32 bytes.
void encodeHeader(const FrameHeader& header, std::uint8_t* out);
/// Header + payload as one buffer (payloadLength is taken from the payload).
std::vector<std::uint8_t> encodeFrame(const Frame& frame);
/// Appends header + payload to `out` (for batching several frames in one write).
void appendFrame(const Frame& frame, std::vector<std::uint8_t>& out);

/// Reads and validates a header: magic, type, flags and payload length against `limits`.
/// Does not check the version (the handshake does, to name both versions). Throws CosimError
/// saying which field is wrong; `where` prefixes the message (e.g. the peer's name).
FrameHeader decodeHeader(const std::uint8_t* in, const Limits& limits, const std::string& where);

/// Decodes one whole frame from `size` bytes: the header, then exactly payloadLength bytes.
/// Throws CosimError on a truncated frame or trailing bytes.
Frame decodeFrame(const std::uint8_t* data,
                  std::size_t size,
                  const Limits& limits,
                  const std::string& where);

} // namespace etsim::cosim
