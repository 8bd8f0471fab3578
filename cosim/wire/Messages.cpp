#include "cosim/wire/Messages.h"

#include "cosim/wire/Bytes.h"

namespace etsim::cosim {

namespace {

constexpr std::uint32_t nullRanks = 0xFFFFFFFFu;
// Fixed part of HELLO before the name: capabilities, mode, reserved, extension offset,
// lookahead, quantum.
constexpr std::size_t helloFixed = 4 + 1 + 1 + 2 + 8 + 8;

// The checks are inlined into the decoder; the messages are built out of line.
[[noreturn]] __attribute__((noinline)) void
badEnum(ByteReader& reader, const char* field, std::uint8_t value, std::uint8_t highest)
{
    reader.fail(std::string("field '") + field + "' has value " + std::to_string(value) +
                ", the highest known is " + std::to_string(highest));
}

[[noreturn]] __attribute__((noinline)) void
badFlag(ByteReader& reader, const char* field, std::uint8_t value)
{
    reader.fail(std::string("field '") + field + "' must be 0 or 1, not " + std::to_string(value));
}

inline std::uint8_t checkedEnum(ByteReader& reader, const char* field, std::uint8_t highest)
{
    const std::uint8_t value = reader.u8(field);
    if (value > highest) [[unlikely]]
        badEnum(reader, field, value, highest);
    return value;
}

inline bool flag(ByteReader& reader, const char* field)
{
    const std::uint8_t value = reader.u8(field);
    if (value > 1) [[unlikely]]
        badFlag(reader, field, value);
    return value == 1;
}

void encodeNode(const WireNodeInfo& node, ByteWriter& writer)
{
    writer.u32(node.rank);
    writer.u64(node.node);
    writer.u8(node.kind);
    writer.u8(node.onHost ? 1 : 0);
    writer.u64(node.bytes);
    writer.u64(node.flops);
    writer.u8(node.collective);
    writer.u8(node.peer ? 1 : 0);
    writer.u32(node.peer.value_or(0));
    writer.u64(node.tag);
    writer.u8(node.group ? 1 : 0);
    writer.u32(node.group.value_or(0));
    if (node.groupRanks) {
        if (node.groupRanks->size() >= nullRanks)
            throw CosimError("cosim: too many group ranks for the wire");
        writer.u32(static_cast<std::uint32_t>(node.groupRanks->size()));
        for (std::uint32_t rank : *node.groupRanks)
            writer.u32(rank);
    } else {
        writer.u32(nullRanks);
    }
    writer.u64(node.groupSequence);
    writer.u32(node.involvedDims);
    writer.u64(node.durationPs);
    writer.u8(node.dataType);
    writer.u8(node.op);
    writer.u8(node.reduceOp);
    const WireNodeInfo::Gemm gemm = node.gemm.value_or(WireNodeInfo::Gemm{0, 0, 0, 0});
    writer.u8(node.gemm ? 1 : 0);
    writer.u64(gemm.m);
    writer.u64(gemm.n);
    writer.u64(gemm.k);
    writer.u64(gemm.batch);
    if (node.attributes.size() > 0xFFFF)
        throw CosimError("cosim: more than 65535 node attributes");
    writer.u16(static_cast<std::uint16_t>(node.attributes.size()));
    for (const WireNodeInfo::Attribute& attribute : node.attributes) {
        writer.shortString(attribute.key, "attribute key");
        if (const auto* integer = std::get_if<std::int64_t>(&attribute.value)) {
            writer.u8(0);
            writer.u64(static_cast<std::uint64_t>(*integer));
        } else if (const auto* real = std::get_if<double>(&attribute.value)) {
            writer.u8(1);
            writer.f64(*real);
        } else {
            const auto& text = std::get<std::string>(attribute.value);
            writer.u8(2);
            writer.u32(static_cast<std::uint32_t>(text.size()));
            writer.bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
        }
    }
}

WireNodeInfo decodeNode(ByteReader& reader)
{
    WireNodeInfo node;
    node.rank = reader.u32("rank");
    node.node = reader.u64("node");
    node.kind = checkedEnum(reader, "kind", enumlimits::nodeKind);
    node.onHost = flag(reader, "onHost");
    node.bytes = reader.u64("bytes");
    node.flops = reader.u64("flops");
    node.collective = checkedEnum(reader, "collective", enumlimits::collective);
    const bool hasPeer = flag(reader, "hasPeer");
    const std::uint32_t peer = reader.u32("peer");
    if (hasPeer)
        node.peer = peer;
    node.tag = reader.u64("tag");
    const bool hasGroup = flag(reader, "hasGroup");
    const std::uint32_t group = reader.u32("group");
    if (hasGroup)
        node.group = group;
    const std::uint32_t rankCount = reader.u32("groupRanks count");
    if (rankCount != nullRanks) {
        // Checked against the bytes present before reserving, so a lying count cannot
        // make the decoder allocate.
        if (std::uint64_t{rankCount} * 4 > reader.remaining())
            reader.fail("groupRanks count " + std::to_string(rankCount) + " needs " +
                        std::to_string(std::uint64_t{rankCount} * 4) + " bytes, " +
                        std::to_string(reader.remaining()) + " left");
        std::vector<std::uint32_t> ranks;
        ranks.reserve(rankCount);
        for (std::uint32_t index = 0; index < rankCount; ++index)
            ranks.push_back(reader.u32("groupRanks"));
        node.groupRanks = std::move(ranks);
    }
    node.groupSequence = reader.u64("groupSequence");
    node.involvedDims = reader.u32("involvedDims");
    node.durationPs = reader.u64("durationPs");
    node.dataType = checkedEnum(reader, "dataType", enumlimits::dataType);
    node.op = checkedEnum(reader, "operator", enumlimits::operatorKind);
    node.reduceOp = checkedEnum(reader, "reduceOp", enumlimits::reduceOp);
    const bool hasGemm = flag(reader, "hasGemm");
    WireNodeInfo::Gemm gemm;
    gemm.m = reader.u64("gemm.m");
    gemm.n = reader.u64("gemm.n");
    gemm.k = reader.u64("gemm.k");
    gemm.batch = reader.u64("gemm.batch");
    if (hasGemm)
        node.gemm = gemm;
    const std::uint16_t attributeCount = reader.u16("attribute count");
    for (std::uint16_t index = 0; index < attributeCount; ++index) {
        WireNodeInfo::Attribute attribute;
        attribute.key = reader.shortString("attribute key");
        const std::uint8_t type = reader.u8("attribute type");
        if (type == 0)
            attribute.value = static_cast<std::int64_t>(reader.u64("attribute value"));
        else if (type == 1)
            attribute.value = reader.f64("attribute value");
        else if (type == 2)
            attribute.value = reader.string(reader.u32("attribute length"), "attribute value");
        else
            reader.fail("attribute '" + attribute.key + "' has unknown type " +
                        std::to_string(type) + " (0 int64, 1 double, 2 string)");
        node.attributes.push_back(std::move(attribute));
    }
    return node;
}

} // namespace

const char* toString(SyncMode mode)
{
    switch (mode) {
    case SyncMode::Conservative:
        return "conservative";
    case SyncMode::LooselyTimed:
        return "loosely-timed";
    case SyncMode::Unsynchronised:
        return "unsynchronised";
    }
    return "?";
}

std::uint32_t capabilityOf(SyncMode mode)
{
    switch (mode) {
    case SyncMode::Conservative:
        return capability::conservative;
    case SyncMode::LooselyTimed:
        return capability::looselyTimed;
    case SyncMode::Unsynchronised:
        return capability::unsynchronised;
    }
    return 0;
}

bool WireNodeInfo::operator==(const WireNodeInfo& other) const
{
    return rank == other.rank && node == other.node && kind == other.kind &&
           onHost == other.onHost && bytes == other.bytes && flops == other.flops &&
           collective == other.collective && peer == other.peer && tag == other.tag &&
           group == other.group && groupRanks == other.groupRanks &&
           groupSequence == other.groupSequence && involvedDims == other.involvedDims &&
           durationPs == other.durationPs && dataType == other.dataType && op == other.op &&
           reduceOp == other.reduceOp && gemm == other.gemm && attributes == other.attributes;
}

std::vector<std::uint8_t> encodeHello(const Hello& hello)
{
    std::vector<std::uint8_t> out;
    ByteWriter writer(out);
    writer.u32(hello.capabilities);
    writer.u8(static_cast<std::uint8_t>(hello.mode));
    writer.u8(0);
    const std::size_t offsetAt = writer.size();
    writer.u16(0);
    writer.u64(hello.lookaheadPs);
    writer.u64(hello.quantumPs);
    writer.shortString(hello.name, "HELLO name");
    writer.shortString(hello.token, "HELLO token");
    writer.patchU16(offsetAt, static_cast<std::uint16_t>(writer.size()));
    return out;
}

Hello decodeHello(const std::vector<std::uint8_t>& payload)
{
    ByteReader reader(payload.data(), payload.size(), "HELLO payload");
    Hello hello;
    hello.capabilities = reader.u32("capabilities");
    const std::uint8_t mode = reader.u8("sync mode");
    if (mode > static_cast<std::uint8_t>(SyncMode::Unsynchronised))
        reader.fail("unknown sync mode " + std::to_string(mode) +
                    " (0 conservative, 1 loosely timed, 2 unsynchronised)");
    hello.mode = static_cast<SyncMode>(mode);
    reader.u8("reserved");
    const std::uint16_t extensionOffset = reader.u16("extension offset");
    hello.lookaheadPs = reader.u64("lookahead");
    hello.quantumPs = reader.u64("quantum");
    hello.name = reader.shortString("name");
    hello.token = reader.shortString("token");
    if (extensionOffset < reader.position() || extensionOffset > payload.size())
        reader.fail("extension offset " + std::to_string(extensionOffset) +
                    " lies outside the payload (" + std::to_string(reader.position()) + ".." +
                    std::to_string(payload.size()) + ")");
    // Extensions of later minor versions start at extensionOffset; 1.0 knows none.
    static_assert(helloFixed == 24, "HELLO fixed part");
    return hello;
}

std::vector<std::uint8_t> encodeRequest(const Request& request)
{
    std::vector<std::uint8_t> out;
    encodeRequest(request, out);
    return out;
}

void encodeRequest(const Request& request, std::vector<std::uint8_t>& out)
{
    // Fixed part, node info (about 100 bytes) and data: at most one allocation per request,
    // none when `out` is reused.
    constexpr std::size_t fixedAndNode = 16 + 128;
    out.clear();
    out.reserve(fixedAndNode + request.data.size());
    ByteWriter writer(out);
    writer.u8(request.command);
    writer.u8(0);
    const std::size_t lengthAt = writer.size();
    writer.u16(0);
    writer.u32(static_cast<std::uint32_t>(request.data.size()));
    writer.u64(request.address);
    if (request.node) {
        const std::size_t start = writer.size();
        encodeNode(*request.node, writer);
        const std::size_t length = writer.size() - start;
        if (length > 0xFFFF)
            throw CosimError("cosim: node info of " + std::to_string(length) +
                             " bytes exceeds the wire's 65535");
        writer.patchU16(lengthAt, static_cast<std::uint16_t>(length));
    }
    writer.bytes(request.data.data(), request.data.size());
}

Request decodeRequest(const std::vector<std::uint8_t>& payload)
{
    ByteReader reader(payload.data(), payload.size(), "REQUEST payload");
    Request request;
    request.command = reader.u8("command");
    if (request.command > 2)
        reader.fail("command " + std::to_string(request.command) +
                    " is not a tlm_command (0 read, 1 write, 2 ignore)");
    reader.u8("reserved");
    const std::uint16_t nodeLength = reader.u16("node info length");
    const std::uint32_t dataLength = reader.u32("data length");
    request.address = reader.u64("address");
    if (nodeLength > 0) {
        ByteReader nodeReader(
            reader.bytes(nodeLength, "node info"), nodeLength, "REQUEST node info");
        // Fields appended by a later minor version are skipped: the block's length bounds it.
        request.node = decodeNode(nodeReader);
    }
    const std::uint8_t* data = reader.bytes(dataLength, "data");
    request.data.assign(data, data + dataLength);
    reader.expectEnd();
    return request;
}

std::vector<std::uint8_t> encodeResponse(const Response& response)
{
    std::vector<std::uint8_t> out;
    encodeResponse(response, out);
    return out;
}

void encodeResponse(const Response& response, std::vector<std::uint8_t>& out)
{
    constexpr std::size_t fixed = 8;
    out.clear();
    out.reserve(fixed + response.data.size());
    ByteWriter writer(out);
    writer.u8(response.status);
    writer.u8(0);
    writer.u16(0);
    writer.u32(static_cast<std::uint32_t>(response.data.size()));
    writer.bytes(response.data.data(), response.data.size());
}

Response decodeResponse(const std::vector<std::uint8_t>& payload)
{
    ByteReader reader(payload.data(), payload.size(), "RESPONSE payload");
    Response response;
    response.status = reader.u8("status");
    if (response.status > Response::highest)
        reader.fail("status " + std::to_string(response.status) +
                    " is not a wire response status (0..6: tlm_response_status + 4, or 6 for "
                    "TLM_BYTE_ENABLE_ERROR_RESPONSE)");
    reader.u8("reserved");
    reader.u16("reserved");
    const std::uint32_t dataLength = reader.u32("data length");
    const std::uint8_t* data = reader.bytes(dataLength, "data");
    response.data.assign(data, data + dataLength);
    reader.expectEnd();
    return response;
}

std::vector<std::uint8_t> encodeGrant(std::uint64_t acknowledged)
{
    std::vector<std::uint8_t> out;
    ByteWriter(out).u64(acknowledged);
    return out;
}

std::uint64_t decodeGrant(const std::vector<std::uint8_t>& payload)
{
    ByteReader reader(payload.data(), payload.size(), "GRANT payload");
    const std::uint64_t acknowledged = reader.u64("acknowledged");
    reader.expectEnd();
    return acknowledged;
}

std::vector<std::uint8_t> encodeText(const std::string& text)
{
    return {text.begin(), text.end()};
}

std::string decodeText(const std::vector<std::uint8_t>& payload)
{
    return {payload.begin(), payload.end()};
}

} // namespace etsim::cosim
