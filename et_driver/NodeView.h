#pragma once
// A Node record read in place, for readers that take a few fields of millions of nodes (the
// custom collective algorithms' traces, platforms/collectives/ChakraAlgorithm): no TraceNode
// is built and no attribute is copied or parsed a second time. The views point into the
// reader's buffers and are valid until its next read or suspend().
//
// TraceReader::next(NodeView&) scans a record itself when it is plainly valid (WireScan.h):
// every string ASCII (so valid UTF-8), only the schema's fields with their wire types, no
// inputs or outputs, no list values but bool_list. Any other record goes through protobuf's
// parser, which accepts or refuses it exactly as for next(TraceNode&), and is viewed from the
// parsed message.

#include "et_driver/TraceNode.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace ChakraProtoMsg {
class Node;
}

namespace etsim::et {

struct AttributeView {
    std::string_view name;
    // No doc_string and no unknown fields (TraceCodec decodes only such attributes into typed
    // fields).
    bool plain = true;
    // The AttributeProto::ValueCase of the value; 0 when it has none.
    int valueCase = 0;
    // An integer or bool value as TraceCodec reads it (integer is false for other values).
    bool integer = false;
    bool isSigned = true;
    std::uint64_t bits = 0;
    // string_val.
    std::string_view text;
    // bool_list: how many values, the first 32 of them as bits (value i in bit i), and whether
    // the list message has no unknown fields.
    std::uint64_t listSize = 0;
    std::uint32_t listBits = 0;
    bool plainList = true;
};

// Whether an attribute is named `name`: length and last character first, since the names of a
// node's attributes share lengths and prefixes (comm_src, comm_dst, comm_tag, chunk_op).
inline bool named(const AttributeView& attr, std::string_view name)
{
    return attr.name.size() == name.size() && !name.empty() && attr.name.back() == name.back() &&
           attr.name == name;
}

class NodeView {
public:
    std::uint64_t id = 0;
    std::string_view name;
    NodeType type = NodeType::Invalid;
    std::vector<std::uint64_t> ctrlDeps;
    std::vector<std::uint64_t> dataDeps;
    std::uint64_t durationMicros = 0;
    // In file order.
    std::vector<AttributeView> attributes;

    // What TraceNode's getter of an integer attribute (comm_src, comm_size, ...) returns for
    // this node: the first attribute of that name that TraceCodec decodes into the field.
    std::optional<std::int64_t> integer(Attr attr) const;
    // integer() of `count` attributes in one pass: values[k] for attrs[k].
    void integers(const Attr* attrs, std::size_t count, std::optional<std::int64_t>* values) const;

    // Views the record `wire` when it is plainly valid (see above); false, with the view in an
    // unspecified state, for any other record.
    bool scan(std::string_view wire);
    // Views a parsed message.
    void assign(const ChakraProtoMsg::Node& message);

private:
    void clear();
};

} // namespace etsim::et
