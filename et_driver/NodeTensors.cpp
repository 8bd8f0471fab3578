#include "et_driver/NodeTensors.h"

#include "et_driver/PyLiteral.h"
#include "et_driver/TraceCodec.h"
#include "kernel/Error.h"

#include <sstream>

namespace etsim::et {

namespace pb = ChakraProtoMsg;

namespace {

constexpr std::size_t tupleSize = 6;

// Whether `value` has the form of a tensor tuple: five integers and a device string.
bool isTensorTuple(const PyValue& value)
{
    if (value.kind != PyValue::Kind::List || value.items.size() != tupleSize)
        return false;
    for (std::size_t i = 0; i + 1 < tupleSize; ++i)
        if (value.items[i].kind != PyValue::Kind::Int)
            return false;
    return value.items.back().kind == PyValue::Kind::Text;
}

void collect(const PyValue& value,
             const TraceNode& node,
             std::vector<TensorUse>& out,
             int depth = 0)
{
    if (isTensorTuple(value)) {
        const std::int64_t id = value.items[0].number;
        const std::int64_t elements = value.items[3].number;
        const std::int64_t elementBytes = value.items[4].number;
        if (id < 0 || elements < 0 || elementBytes < 0)
            throw Error("node " + std::to_string(node.id) + " (\"" + node.name +
                        "\"): tensor tuple with tensor_id " + std::to_string(id) +
                        " has a negative entry; tensor_id, num_elem and elem_bytes are counts");
        const auto count = static_cast<std::uint64_t>(elements);
        const auto size = static_cast<std::uint64_t>(elementBytes);
        if (size != 0 && count > ~std::uint64_t{0} / size)
            throw Error("node " + std::to_string(node.id) + " (\"" + node.name + "\"): tensor " +
                        std::to_string(id) + " has " + std::to_string(count) + " elements of " +
                        std::to_string(size) +
                        " B, more than 2^64 bytes; fix num_elem or elem_bytes");
        if (count * size != 0)
            out.push_back(TensorUse{static_cast<std::uint64_t>(id), count * size});
        return;
    }
    // Nested lists are shallow in practice (a list of tensors); the bound keeps a corrupt
    // text from recursing without end (the parser bounds its own depth too).
    if (value.kind != PyValue::Kind::List || depth > 8)
        return;
    for (const PyValue& item : value.items)
        collect(item, node, out, depth + 1);
}

std::vector<TensorUse> tensorsOf(const std::optional<pb::IOInfo>& io, const TraceNode& node)
{
    std::vector<TensorUse> out;
    if (!io)
        return out;
    const std::vector<PyValue> values = parseList(io->values());
    const std::vector<PyValue> types = parseList(io->types());
    for (std::size_t i = 0; i < values.size(); ++i) {
        // A typed argument that is no tensor (an int list of six) is not read as one.
        if (i < types.size() && types[i].text.find("Tensor") == std::string::npos)
            continue;
        collect(values[i], node, out);
    }
    return out;
}

void writeTuples(std::ostringstream& values,
                 std::ostringstream& shapes,
                 std::ostringstream& types,
                 const std::vector<TensorUse>& tensors,
                 std::uint64_t elementBytes,
                 const std::string& type)
{
    values << '[';
    shapes << '[';
    types << '[';
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        const char* comma = i == 0 ? "" : ", ";
        const std::uint64_t elements = tensors[i].bytes / elementBytes;
        values << comma << '[' << tensors[i].id << ", " << tensors[i].id << ", 0, " << elements
               << ", " << elementBytes << ", 'cuda:0']";
        shapes << comma << '[' << elements << ']';
        types << comma << '\'' << type << '\'';
    }
    values << ']';
    shapes << ']';
    types << ']';
}

pb::IOInfo
ioInfo(const std::vector<TensorUse>& tensors, std::uint64_t elementBytes, const std::string& type)
{
    std::ostringstream values;
    std::ostringstream shapes;
    std::ostringstream types;
    writeTuples(values, shapes, types, tensors, elementBytes, type);
    pb::IOInfo io;
    io.set_values(values.str());
    io.set_shapes(shapes.str());
    io.set_types(types.str());
    return io;
}

} // namespace

std::optional<NodeTensors> nodeTensors(const TraceNode& node)
{
    NodeTensors tensors;
    const TraceCodec::Io io = TraceCodec::io(node);
    tensors.inputs = tensorsOf(io.inputs, node);
    tensors.outputs = tensorsOf(io.outputs, node);
    if (tensors.inputs.empty() && tensors.outputs.empty())
        return std::nullopt;
    return tensors;
}

void setNodeTensors(TraceNode& node,
                    const std::vector<TensorUse>& inputs,
                    const std::vector<TensorUse>& outputs,
                    std::uint64_t elementBytes,
                    const std::string& type)
{
    if (elementBytes == 0)
        throw Error("setNodeTensors: elementBytes must be at least 1");
    TraceCodec::setInputs(node, ioInfo(inputs, elementBytes, type));
    TraceCodec::setOutputs(node, ioInfo(outputs, elementBytes, type));
}

} // namespace etsim::et
