#include "et_driver/PackedNodes.h"

#include "kernel/Error.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace etsim::et {

namespace {

// What precedes a node's variable-length parts.
struct Header {
    std::uint64_t id;
    std::uint64_t startTimeMicros;
    std::uint64_t durationMicros;
    std::int32_t type;
    std::uint32_t present;
    std::uint32_t nameBytes;
    std::uint32_t layoutBytes;
    std::uint32_t restBytes;
    std::uint32_t stringBytes[3];
    std::uint32_t ctrlDeps;
    std::uint32_t dataDeps;
    std::uint32_t inputs; // tensors read ahead (TraceNode::tensorsRead), when Read
    std::uint32_t outputs;
    std::uint32_t tensorsAhead; // TraceNode::TensorsAhead
};

void put(std::vector<char>& bytes, const void* data, std::size_t size)
{
    const auto* from = static_cast<const char*>(data);
    bytes.insert(bytes.end(), from, from + size);
}

// Tensor lists are packed as their bytes.
static_assert(std::is_trivially_copyable_v<TensorUse>);

} // namespace

void PackedNodes::clear()
{
    bytes.clear();
    count = 0;
    taken = 0;
    readAt = 0;
}

void PackedNodes::release()
{
    clear();
    std::vector<char>().swap(bytes);
}

void PackedNodes::append(const TraceNode& node)
{
    // Sizes fit 32 bits for any node a reader gives (a record is at most 64 MiB, see
    // TraceReaderOptions::maxRecordBytes); a node made by hand could pass them.
    constexpr std::size_t most = UINT32_MAX;
    const bool tensors = node.tensorsAhead == TraceNode::TensorsAhead::Read;
    const std::size_t inputs = tensors ? node.tensorsRead.inputs.size() : 0;
    const std::size_t outputs = tensors ? node.tensorsRead.outputs.size() : 0;
    if (node.name.size() > most || node.layout.size() > most || node.rest.size() > most ||
        node.ctrlDeps.size() > most || node.dataDeps.size() > most || inputs > most ||
        outputs > most)
        throw Error("node " + std::to_string(node.id) +
                    " is too large to pack: a part of it passes 4 GiB");
    Header header{};
    header.id = node.id;
    header.startTimeMicros = node.startTimeMicros;
    header.durationMicros = node.durationMicros;
    header.type = static_cast<std::int32_t>(node.type);
    header.present = node.present;
    header.nameBytes = static_cast<std::uint32_t>(node.name.size());
    header.layoutBytes = static_cast<std::uint32_t>(node.layout.size());
    header.restBytes = static_cast<std::uint32_t>(node.rest.size());
    for (std::size_t i = 0; i < node.strings.size(); ++i)
        header.stringBytes[i] = static_cast<std::uint32_t>(node.strings[i].size());
    header.ctrlDeps = static_cast<std::uint32_t>(node.ctrlDeps.size());
    header.dataDeps = static_cast<std::uint32_t>(node.dataDeps.size());
    header.inputs = static_cast<std::uint32_t>(inputs);
    header.outputs = static_cast<std::uint32_t>(outputs);
    header.tensorsAhead = static_cast<std::uint32_t>(node.tensorsAhead);
    put(bytes, &header, sizeof header);
    put(bytes, node.ints.data(), sizeof node.ints);
    put(bytes, node.name.data(), node.name.size());
    put(bytes, node.layout.data(), node.layout.size());
    put(bytes, node.rest.data(), node.rest.size());
    for (const std::string& text : node.strings)
        put(bytes, text.data(), text.size());
    put(bytes, node.ctrlDeps.data(), node.ctrlDeps.size() * sizeof(std::uint64_t));
    put(bytes, node.dataDeps.data(), node.dataDeps.size() * sizeof(std::uint64_t));
    if (tensors) {
        put(bytes, node.tensorsRead.inputs.data(), inputs * sizeof(TensorUse));
        put(bytes, node.tensorsRead.outputs.data(), outputs * sizeof(TensorUse));
    }
    ++count;
}

bool PackedNodes::take(TraceNode& node)
{
    if (taken == count)
        return false;
    const char* at = bytes.data() + readAt;
    Header header{};
    std::memcpy(&header, at, sizeof header);
    at += sizeof header;
    node.id = header.id;
    node.startTimeMicros = header.startTimeMicros;
    node.durationMicros = header.durationMicros;
    node.type = static_cast<NodeType>(header.type);
    node.present = header.present;
    std::memcpy(node.ints.data(), at, sizeof node.ints);
    at += sizeof node.ints;
    auto text = [&at](std::string& into, std::uint32_t size) {
        into.assign(at, size);
        at += size;
    };
    text(node.name, header.nameBytes);
    text(node.layout, header.layoutBytes);
    text(node.rest, header.restBytes);
    for (std::size_t i = 0; i < node.strings.size(); ++i)
        text(node.strings[i], header.stringBytes[i]);
    // A list of trivially copyable items (dependency ids, tensors), packed as their bytes.
    auto items = [&at](auto& into, std::uint32_t size) {
        using Item = typename std::decay_t<decltype(into)>::value_type;
        into.resize(size);
        if (size > 0)
            std::memcpy(into.data(), at, size * sizeof(Item));
        at += size * sizeof(Item);
    };
    items(node.ctrlDeps, header.ctrlDeps);
    items(node.dataDeps, header.dataDeps);
    node.tensorsAhead = static_cast<TraceNode::TensorsAhead>(header.tensorsAhead);
    items(node.tensorsRead.inputs, header.inputs);
    items(node.tensorsRead.outputs, header.outputs);
    readAt = static_cast<std::size_t>(at - bytes.data());
    ++taken;
    return true;
}

} // namespace etsim::et
