#include "et_driver/NodeView.h"

#include "et_driver/TraceCodec.h"
#include "et_driver/WireScan.h"
#include "et_driver/proto/et_def.pb.h"

#include <algorithm>
#include <array>

namespace etsim::et {

namespace pb = ChakraProtoMsg;

void NodeView::clear()
{
    id = 0;
    name = {};
    type = NodeType::Invalid;
    ctrlDeps.clear();
    dataDeps.clear();
    durationMicros = 0;
    attributes.clear();
}

bool NodeView::scan(std::string_view record)
{
    clear();
    const auto* begin = reinterpret_cast<const std::uint8_t*>(record.data());
    Wire wire(begin, begin + record.size());
    NodeScalars scalars;
    while (!wire.done()) {
        std::uint32_t field = 0;
        std::uint32_t wireType = 0;
        if (!wire.tag(field, wireType))
            return false;
        if (NodeScalars::holds(field)) {
            if (!scalars.read(wire, field, wireType))
                return false;
            continue;
        }
        switch (field) {
        case 2:
            if (wireType != Delimited || !wire.ascii(name))
                return false;
            break;
        case 4:
        case 5:
            if (!wire.repeated(wireType, field == 4 ? ctrlDeps : dataDeps))
                return false;
            break;
        case 10: {
            Wire body(nullptr, nullptr);
            if (wireType != Delimited || !wire.delimited(body))
                return false;
            attributes.emplace_back();
            if (!scanAttribute(body, attributes.back()))
                return false;
            break;
        }
        default:
            // inputs, outputs and unknown fields: protobuf's parser.
            return false;
        }
    }
    id = scalars.id;
    type = scalars.type;
    durationMicros = scalars.durationMicros;
    return true;
}

void NodeView::assign(const pb::Node& message)
{
    clear();
    id = message.id();
    name = message.name();
    type = static_cast<NodeType>(message.type());
    ctrlDeps.assign(message.ctrl_deps().begin(), message.ctrl_deps().end());
    dataDeps.assign(message.data_deps().begin(), message.data_deps().end());
    durationMicros = message.duration_micros();
    for (const pb::AttributeProto& attr : message.attr())
        attributes.push_back(TraceCodec::attributeView(attr));
}

std::optional<std::int64_t> NodeView::integer(Attr attr) const
{
    std::optional<std::int64_t> value;
    integers(&attr, 1, &value);
    return value;
}

void NodeView::integers(const Attr* attrs,
                        std::size_t count,
                        std::optional<std::int64_t>* values) const
{
    std::array<std::string_view, attrCount> names{};
    count = std::min(count, names.size());
    for (std::size_t k = 0; k < count; ++k) {
        values[k].reset();
        names[k] = attrName(attrs[k]);
    }
    for (const AttributeView& view : attributes) {
        if (!view.plain || !view.integer)
            continue;
        for (std::size_t k = 0; k < count; ++k)
            if (!values[k] && named(view, names[k])) {
                values[k] =
                    TraceCodec::typedValue(attrs[k], TraceCodec::Integer{view.isSigned, view.bits});
                break;
            }
    }
}

} // namespace etsim::et
