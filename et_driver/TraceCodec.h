#pragma once
// Conversion between TraceNode and the protobuf Node of the Chakra schema. Decoding keeps every
// attribute the TraceNode does not type (and every unknown field) as wire bytes, so
// encode(decode(record)) serializes to the original bytes for canonically encoded records.

#include "et_driver/NodeView.h"
#include "et_driver/TraceNode.h"
#include "et_driver/proto/et_def.pb.h"

#include <optional>
#include <string_view>
#include <vector>

namespace etsim::et {

class TraceCodec {
public:
    // Fills `node` from `message`. Strings are moved out of `message`, which is left valid but
    // unspecified (reuse it for the next record).
    //
    // A well-known attribute is decoded into its typed field when it is the first one of that
    // name, has no doc_string and holds a value the field can represent: any integer or bool
    // encoding for integer fields (spec 4.2), string_val for strings, bool_list of at most 32
    // entries for involved_dim. Anything else (a float comm_size, a duplicate name, an
    // out-of-range value) is kept untouched among the other attributes, where a validator can
    // find and report it.
    static void decode(ChakraProtoMsg::Node& message, TraceNode& node);
    // The same, given also the wire bytes `message` was parsed from: the preserved parts are
    // then copied from them instead of being serialized again (the reader's fast path, and
    // exact even for non-canonical encodings of those parts).
    static void decode(ChakraProtoMsg::Node& message, std::string_view wire, TraceNode& node);

    // The same from the record's wire bytes alone, without protobuf's parser, when the record
    // is plainly valid (WireScan.h): what decode() makes of the parsed record, in one pass and
    // no allocation beyond the node's own buffers. False, with `node` unspecified, for any
    // other record (protobuf must then parse it, and may refuse it).
    static bool decodeRecord(std::string_view wire, TraceNode& node);

    // An attribute as NodeView and decode() see it.
    static AttributeView attributeView(const ChakraProtoMsg::AttributeProto& attr);

    // Rebuilds the protobuf Node, attributes in their original order and encodings.
    // Throws etsim::Error if the node's preserved bytes do not parse (they can only come from
    // decode(), so that would be a bug, not bad input).
    static void encode(const TraceNode& node, ChakraProtoMsg::Node& message);

    // The attributes that are not typed fields, in file order.
    static std::vector<ChakraProtoMsg::AttributeProto> otherAttributes(const TraceNode& node);
    // Adds an attribute after the existing ones: decoded into a typed field as decode() would,
    // preserved as it is otherwise.
    static void addAttribute(TraceNode& node, const ChakraProtoMsg::AttributeProto& attr);

    // An integer or bool attribute value as decode() reads it (whatever its encoding): its bits
    // and whether they are signed; nullopt for other values.
    struct Integer {
        bool isSigned = true;
        uint64_t bits = 0;
    };
    static std::optional<Integer> integerOf(const ChakraProtoMsg::AttributeProto& attr);
    // The value the typed field of `attr` takes for it, or nullopt when the field cannot hold
    // it (decode() then preserves the attribute). For the integer attributes (not pg_name,
    // op_kind, dtype, involved_dim).
    static std::optional<int64_t> typedValue(Attr attr, Integer value);

    // Node.inputs / Node.outputs; nullopt when the message is absent (presence matters, 2.7).
    static std::optional<ChakraProtoMsg::IOInfo> inputs(const TraceNode& node);
    static std::optional<ChakraProtoMsg::IOInfo> outputs(const TraceNode& node);
    // Both, from one parse of the preserved bytes (the lowering reads both for every node).
    struct Io {
        std::optional<ChakraProtoMsg::IOInfo> inputs;
        std::optional<ChakraProtoMsg::IOInfo> outputs;
    };
    static Io io(const TraceNode& node);
    /// Node.inputs and Node.outputs as their bytes lie in the preserved part: the values and
    /// types strings, viewed, not copied. nullopt where the parse would merge or drop parts
    /// (a field given twice, a group); io() then has the answer.
    struct IoTextPart {
        bool present = false;
        std::string_view values;
        std::string_view types;
    };
    struct IoText {
        IoTextPart inputs;
        IoTextPart outputs;
    };
    static std::optional<IoText> ioText(const TraceNode& node);
    static void setInputs(TraceNode& node, const ChakraProtoMsg::IOInfo& info);
    static void setOutputs(TraceNode& node, const ChakraProtoMsg::IOInfo& info);

private:
    static bool decodeAttribute(const AttributeView& attr, TraceNode& node);
    static void preserveAttribute(const ChakraProtoMsg::AttributeProto& attr, TraceNode& node);
    static void addOtherRun(TraceNode& node);
    static void decodeFields(ChakraProtoMsg::Node& message, TraceNode& node);
    static bool
    decodeFromWire(ChakraProtoMsg::Node& message, std::string_view wire, TraceNode& node);
    static ChakraProtoMsg::Node parsePreserved(const TraceNode& node);
};

} // namespace etsim::et
