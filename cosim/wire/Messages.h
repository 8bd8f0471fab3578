#pragma once
// Payloads of the wire protocol's messages (cosim/PROTOCOL.md, sections 3-5) with explicit
// encode/decode functions. SystemC-free: the node-info fields mirror etsim::EtNodeInfo
// (kernel/Extensions.h) with plain integers; cosim/Proxy converts between the two.

#include "cosim/wire/Frame.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace etsim::cosim {

enum class SyncMode : std::uint8_t {
    Conservative = 0,
    LooselyTimed = 1,
    Unsynchronised = 2,
};
const char* toString(SyncMode mode);

namespace capability {
inline constexpr std::uint32_t conservative = 1u << 0;
inline constexpr std::uint32_t looselyTimed = 1u << 1;
inline constexpr std::uint32_t unsynchronised = 1u << 2;
inline constexpr std::uint32_t sharedMemory = 1u << 3;
inline constexpr std::uint32_t data = 1u << 4;
inline constexpr std::uint32_t token = 1u << 5;
} // namespace capability
/// The capability bit that says a side can run `mode`.
std::uint32_t capabilityOf(SyncMode mode);

struct Hello {
    std::uint32_t capabilities = 0;
    SyncMode mode = SyncMode::Conservative;
    std::uint64_t lookaheadPs = 0;
    std::uint64_t quantumPs = 0;
    std::string name;
    std::string token;
};
std::vector<std::uint8_t> encodeHello(const Hello& hello);
Hello decodeHello(const std::vector<std::uint8_t>& payload);

/// etsim::EtNodeInfo on the wire; enum fields carry the enum's underlying value.
struct WireNodeInfo {
    struct Attribute {
        std::string key;
        std::variant<std::int64_t, double, std::string> value;
        bool operator==(const Attribute& other) const
        {
            return key == other.key && value == other.value;
        }
    };
    struct Gemm {
        std::uint64_t m = 0, n = 0, k = 0, batch = 1;
        bool operator==(const Gemm& other) const
        {
            return m == other.m && n == other.n && k == other.k && batch == other.batch;
        }
    };
    std::uint32_t rank = 0;
    std::uint64_t node = 0;
    std::uint8_t kind = 0;
    bool onHost = false;
    std::uint64_t bytes = 0;
    std::uint64_t flops = 0;
    std::uint8_t collective = 0;
    std::optional<std::uint32_t> peer;
    std::uint64_t tag = 0;
    std::optional<std::uint32_t> group;
    std::optional<std::vector<std::uint32_t>> groupRanks; // empty optional = all ranks
    std::uint64_t groupSequence = 0;
    std::uint32_t involvedDims = 0;
    std::uint64_t durationPs = 0;
    std::uint8_t dataType = 0;
    std::uint8_t op = 0;
    std::uint8_t reduceOp = 0;
    std::optional<Gemm> gemm;
    std::vector<Attribute> attributes;

    bool operator==(const WireNodeInfo& other) const;
};

/// Highest enum values the decoder accepts (those of kernel/Extensions.h).
namespace enumlimits {
inline constexpr std::uint8_t nodeKind = 7;
inline constexpr std::uint8_t collective = 9;
inline constexpr std::uint8_t dataType = 11;
inline constexpr std::uint8_t operatorKind = 9;
inline constexpr std::uint8_t reduceOp = 5;
} // namespace enumlimits

struct Request {
    std::uint8_t command = 0; // tlm_command: 0 read, 1 write, 2 ignore
    std::uint64_t address = 0;
    std::optional<WireNodeInfo> node;
    std::vector<std::uint8_t> data;
};
std::vector<std::uint8_t> encodeRequest(const Request& request);
/// Encodes into `out` (replacing its contents, keeping its capacity).
void encodeRequest(const Request& request, std::vector<std::uint8_t>& out);
Request decodeRequest(const std::vector<std::uint8_t>& payload);

struct Response {
    /// tlm_response_status + 4 for TLM_INCOMPLETE_RESPONSE (0) to TLM_OK_RESPONSE (1):
    /// TLM_OK_RESPONSE is 5, TLM_GENERIC_ERROR_RESPONSE (-1) 3; since 1.1,
    /// TLM_BYTE_ENABLE_ERROR_RESPONSE (-5) is 6.
    static constexpr std::uint8_t ok = 5;
    static constexpr std::uint8_t genericError = 3;
    static constexpr std::uint8_t byteEnableError = 6;
    static constexpr std::uint8_t highest = byteEnableError;
    std::uint8_t status = ok;
    std::vector<std::uint8_t> data;
};
std::vector<std::uint8_t> encodeResponse(const Response& response);
/// Encodes into `out` (replacing its contents, keeping its capacity).
void encodeResponse(const Response& response, std::vector<std::uint8_t>& out);
Response decodeResponse(const std::vector<std::uint8_t>& payload);

/// GRANT: the promised time travels in the header's timestamp; the payload is the count of
/// REQUEST/RESPONSE frames the sender has received.
std::vector<std::uint8_t> encodeGrant(std::uint64_t acknowledged);
std::uint64_t decodeGrant(const std::vector<std::uint8_t>& payload);

/// Text payloads (CONFIG, TERMINATE, ERROR).
std::vector<std::uint8_t> encodeText(const std::string& text);
std::string decodeText(const std::vector<std::uint8_t>& payload);

} // namespace etsim::cosim
