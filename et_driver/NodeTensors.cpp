#include "et_driver/NodeTensors.h"

#include "et_driver/CanonicalTuples.h"
#include "et_driver/PyLiteral.h"
#include "et_driver/TraceCodec.h"
#include "kernel/Error.h"

#include <array>
#include <sstream>
#include <string_view>

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

// The tensor a tuple names, appended to `out` unless it has no bytes; throws for entries no
// tensor can have.
void addTensor(std::int64_t id,
               std::int64_t elements,
               std::int64_t elementBytes,
               const TraceNode& node,
               std::vector<TensorUse>& out)
{
    if (id < 0 || elements < 0 || elementBytes < 0)
        throw Error("node " + std::to_string(node.id) + " (\"" + node.name +
                    "\"): tensor tuple with tensor_id " + std::to_string(id) +
                    " has a negative entry; tensor_id, num_elem and elem_bytes are counts");
    const auto count = static_cast<std::uint64_t>(elements);
    const auto size = static_cast<std::uint64_t>(elementBytes);
    if (size != 0 && count > ~std::uint64_t{0} / size)
        throw Error("node " + std::to_string(node.id) + " (\"" + node.name + "\"): tensor " +
                    std::to_string(id) + " has " + std::to_string(count) + " elements of " +
                    std::to_string(size) + " B, more than 2^64 bytes; fix num_elem or elem_bytes");
    if (count * size != 0)
        out.push_back(TensorUse{static_cast<std::uint64_t>(id), count * size});
}

// Nested lists are shallow in practice (a list of tensors); the bound keeps a corrupt text
// from recursing without end (the parser bounds its own depth too). Tuples are looked for
// down to this depth below an argument.
constexpr int deepestTuple = 9;

void collect(const PyValue& value,
             const TraceNode& node,
             std::vector<TensorUse>& out,
             int depth = 0)
{
    if (isTensorTuple(value)) {
        addTensor(value.items[0].number, value.items[3].number, value.items[4].number, node, out);
        return;
    }
    if (value.kind != PyValue::Kind::List || depth >= deepestTuple)
        return;
    for (const PyValue& item : value.items)
        collect(item, node, out, depth + 1);
}

// Whether an argument of this type is read for tensors: any type naming a Tensor.
bool namesTensor(std::string_view type)
{
    return type.find("Tensor") != std::string_view::npos;
}

// The reference reading, from the value trees.
std::vector<TensorUse>
tensorsOf(std::string_view valuesText, std::string_view typesText, const TraceNode& node)
{
    std::vector<TensorUse> out;
    const std::vector<PyValue> values = parseList(valuesText);
    const std::vector<PyValue> types = parseList(typesText);
    for (std::size_t i = 0; i < values.size(); ++i) {
        // A typed argument that is no tensor (an int list of six) is not read as one.
        if (i < types.size() && !namesTensor(types[i].text))
            continue;
        collect(values[i], node, out);
    }
    return out;
}

std::vector<TensorUse> tensorsOf(const std::optional<pb::IOInfo>& io, const TraceNode& node)
{
    if (!io)
        return {};
    return tensorsOf(io->values(), io->types(), node);
}

// The same reading without a tree, from the parser's events: every compute node is read, and
// building its trees (with protobuf's copy of the preserved bytes) took about a tenth of a
// whole run's time. Arguments are the values at depth 1 of a list.

// Which arguments' types name a Tensor.
class TypeScan final : public PyLiteralEvents {
public:
    // How many arguments' types are kept; a node with more takes the tree reading.
    static constexpr std::size_t kept = 64;

    void beginList(int depth) override
    {
        if (depth == 1)
            add(false); // a list as a type has no text, so names no Tensor
    }
    void endList(int depth) override { rootIsList = rootIsList || depth == 0; }
    void quoted(std::string_view raw, bool escaped, int depth) override
    {
        if (depth == 1)
            add(namesTensor(escaped ? std::string_view(unescapePyQuoted(raw)) : raw));
    }
    void bare(std::string_view token, std::optional<std::int64_t> /*integer*/, int depth) override
    {
        if (depth == 1)
            add(namesTensor(token));
    }

    // Whether argument `index` is skipped: typed, and not as a Tensor.
    bool skips(std::size_t index) const { return index < count && !tensor[index]; }

    bool rootIsList = false;
    std::size_t count = 0;

private:
    void add(bool named)
    {
        if (count < kept)
            tensor[count] = named;
        ++count;
    }

    std::array<bool, kept> tensor{};
};

// The tensor tuples of the arguments `types` does not skip, in text order.
class TupleScan final : public PyLiteralEvents {
public:
    TupleScan(const TypeScan* types, const TraceNode& node, std::vector<TensorUse>& out)
        : types(types), node(node), out(out)
    {
    }

    void beginList(int depth) override
    {
        if (depth == 1)
            skipped = types != nullptr && types->skips(argument);
        if (depth < static_cast<int>(lists.size())) {
            lists[depth].items = 0;
            lists[depth].shape = true;
        }
    }
    void endList(int depth) override
    {
        if (depth == 0) {
            rootIsList = true;
            return;
        }
        if (depth < static_cast<int>(lists.size())) {
            const List& list = lists[depth];
            // A tuple lies below its argument at depth - 1: collect() looks that far.
            if (list.items == 6 && list.shape && !skipped && depth - 1 <= deepestTuple)
                take(list);
        }
        item(depth, false, false, 0);
    }
    void quoted(std::string_view /*raw*/, bool /*escaped*/, int depth) override
    {
        item(depth, false, true, 0);
    }
    void bare(std::string_view /*token*/, std::optional<std::int64_t> integer, int depth) override
    {
        item(depth, integer.has_value(), !integer.has_value(), integer.value_or(0));
    }

    bool rootIsList = false;
    // The first tuple the reading refuses; it counts only once the whole text has parsed.
    std::optional<Error> refusal;

private:
    // Set up by beginList, not before: the scan runs for every node, and clearing all the
    // depths at construction cost more than the scan of a short list.
    struct List {
        std::size_t items;
        bool shape;                       // five integers, then a text
        std::array<std::int64_t, 5> ints; // read only once all five are set
    };

    // A value at `depth` has ended: it is an item of the list around it.
    void item(int depth, bool integer, bool text, std::int64_t value)
    {
        if (depth == 1)
            ++argument;
        if (depth < 1 || depth > static_cast<int>(lists.size()))
            return;
        List& list = lists[depth - 1];
        const std::size_t at = list.items++;
        if (at < 5) {
            list.shape = list.shape && integer;
            list.ints[at] = value;
        } else {
            list.shape = list.shape && at == 5 && text;
        }
    }
    void take(const List& list)
    {
        if (refusal)
            return;
        try {
            addTensor(list.ints[0], list.ints[3], list.ints[4], node, out);
        } catch (const Error& error) {
            refusal = error;
        }
    }

    const TypeScan* types;
    const TraceNode& node;
    std::vector<TensorUse>& out;
    // The lists open at each depth (the parser goes no deeper than 32).
    std::array<List, 34> lists;
    std::size_t argument = 0;
    bool skipped = false;
};

// The tensors of one IOInfo from its text, or nullopt when it needs the tree reading.
// Into `out` (cleared first, its capacity kept); false when the tree reading must take it.
bool scanTensors(const TraceCodec::IoTextPart& part,
                 const TraceNode& node,
                 std::vector<TensorUse>& out)
{
    out.clear();
    if (!part.present || readCanonicalTuples(part.values, part.types, out))
        return true;
    out.clear();
    TypeScan types;
    const bool typed = scanPyLiteral(part.types, types) && types.rootIsList;
    if (typed && types.count > TypeScan::kept)
        return false;
    TupleScan tuples(typed ? &types : nullptr, node, out);
    if (!scanPyLiteral(part.values, tuples) || !tuples.rootIsList) {
        out.clear();
        return true;
    }
    if (tuples.refusal)
        throw *tuples.refusal;
    return true;
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

bool nodeTensors(const TraceNode& node, NodeTensors& out)
{
    const std::optional<TraceCodec::IoText> text = TraceCodec::ioText(node);
    if (!text || !scanTensors(text->inputs, node, out.inputs) ||
        !scanTensors(text->outputs, node, out.outputs)) {
        std::optional<NodeTensors> read = nodeTensorsFromTrees(node);
        out.inputs.clear();
        out.outputs.clear();
        if (!read)
            return false;
        out.inputs.assign(read->inputs.begin(), read->inputs.end());
        out.outputs.assign(read->outputs.begin(), read->outputs.end());
        return true;
    }
    return !out.inputs.empty() || !out.outputs.empty();
}

std::optional<NodeTensors> nodeTensors(const TraceNode& node)
{
    NodeTensors tensors;
    if (!nodeTensors(node, tensors))
        return std::nullopt;
    return tensors;
}

std::optional<NodeTensors> nodeTensorsFromTrees(const TraceNode& node)
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
