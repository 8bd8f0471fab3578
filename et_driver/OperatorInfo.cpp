#include "et_driver/OperatorInfo.h"

#include "et_driver/PyLiteral.h"
#include "et_driver/TraceCodec.h"
#include "kernel/Error.h"

#include <array>
#include <cctype>
#include <cmath>
#include <memory>

namespace etsim::et {

namespace pb = ChakraProtoMsg;

namespace {

constexpr std::array<std::string_view, 7> opKindNames = {
    "unknown", "gemm", "bmm", "conv2d", "attention", "elementwise", "reduce"};
constexpr std::array<std::string_view, 8> dataTypeNames = {
    "unknown", "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8"};

// One argument of an operator schema: "SymInt[2] padding=[0, 0]" -> name padding, default.
struct SchemaArg {
    std::string name;
    std::string defaultText;
};

struct Schema {
    std::string op;       // "aten::conv2d" (overload name removed)
    std::string overload; // "padding" for "aten::conv2d.padding"
    std::vector<SchemaArg> args;

    int indexOf(std::string_view name) const
    {
        for (std::size_t i = 0; i < args.size(); ++i) {
            if (args[i].name == name)
                return static_cast<int>(i);
        }
        return -1;
    }
};

std::string trim(std::string_view text)
{
    std::size_t b = text.find_first_not_of(' ');
    std::size_t e = text.find_last_not_of(' ');
    if (b == std::string_view::npos)
        return {};
    return std::string(text.substr(b, e - b + 1));
}

// "aten::mm(Tensor self, Tensor mat2) -> Tensor"; also a bare name "aten::mm" or a node name
// "aten::mm(0)" (no argument list is recovered from those).
Schema parseSchema(std::string_view text)
{
    Schema schema;
    std::size_t open = text.find('(');
    std::string full = trim(text.substr(0, open));
    std::size_t dot = full.find('.', full.find("::") == std::string::npos ? 0 : full.find("::"));
    schema.op = full.substr(0, dot);
    if (dot != std::string::npos)
        schema.overload = full.substr(dot + 1);
    if (open == std::string_view::npos)
        return schema;
    // Split the argument list at top-level commas.
    int depth = 0;
    std::size_t start = open + 1;
    for (std::size_t i = open + 1; i < text.size(); ++i) {
        char c = text[i];
        if (c == '(' || c == '[')
            ++depth;
        else if ((c == ']' || c == ')') && depth > 0)
            --depth;
        else if ((c == ',' && depth == 0) || (c == ')' && depth == 0)) {
            std::string arg = trim(text.substr(start, i - start));
            start = i + 1;
            if (!arg.empty() && arg != "*") {
                SchemaArg parsed;
                std::size_t eq = arg.find('=');
                std::string decl = trim(arg.substr(0, eq));
                if (eq != std::string::npos)
                    parsed.defaultText = trim(arg.substr(eq + 1));
                std::size_t space = decl.rfind(' ');
                parsed.name = space == std::string::npos ? decl : decl.substr(space + 1);
                schema.args.push_back(std::move(parsed));
            }
            if (c == ')')
                break;
        }
    }
    return schema;
}

std::optional<std::string> stringAttribute(const TraceNode& node, std::string_view name)
{
    if (node.otherAttributeCount() == 0)
        return std::nullopt; // the common case in etsim's own traces: nothing to parse
    for (const pb::AttributeProto& attr : TraceCodec::otherAttributes(node)) {
        if (attr.name() == name && attr.value_case() == pb::AttributeProto::kStringVal)
            return attr.string_val();
    }
    return std::nullopt;
}

int64_t product(const std::vector<int64_t>& dims, std::size_t from, std::size_t to)
{
    int64_t p = 1;
    for (std::size_t i = from; i < to && i < dims.size(); ++i)
        p *= dims[i];
    return p;
}

bool positive(const std::vector<int64_t>& dims)
{
    for (int64_t d : dims) {
        if (d <= 0)
            return false;
    }
    return !dims.empty();
}

// What the PyTorch parser works on: per-argument shapes, types and values.
struct Inputs {
    std::vector<PyValue> shapes;
    std::vector<PyValue> values;
    std::vector<std::string> types;

    std::optional<std::vector<int64_t>> shape(std::size_t index) const
    {
        if (index >= shapes.size() || !shapes[index].isIntList())
            return std::nullopt;
        return shapes[index].ints();
    }
};

// The int list (or int broadcast to `count` entries) of an argument given by value or by
// its schema default.
std::optional<std::vector<int64_t>>
intArgument(const Schema& schema, const Inputs& inputs, std::string_view name, std::size_t count)
{
    int index = schema.indexOf(name);
    if (index < 0)
        return std::nullopt;
    std::optional<PyValue> value;
    if (static_cast<std::size_t>(index) < inputs.values.size())
        value = inputs.values[static_cast<std::size_t>(index)];
    else if (!schema.args[static_cast<std::size_t>(index)].defaultText.empty())
        value = parsePyLiteral(schema.args[static_cast<std::size_t>(index)].defaultText);
    if (!value)
        return std::nullopt;
    if (value->kind == PyValue::Kind::Int)
        return std::vector<int64_t>(count, value->number);
    if (value->isIntList()) {
        std::vector<int64_t> out = value->ints();
        if (out.size() == 1)
            out.assign(count, out[0]);
        if (out.size() == count)
            return out;
    }
    return std::nullopt;
}

void unknown(OperatorInfo& info, std::string note)
{
    info.kind = OpKind::Unknown;
    info.gemms.clear();
    info.note = std::move(note);
}

void fromMatmul(OperatorInfo& info, std::vector<int64_t> a, std::vector<int64_t> b)
{
    // torch.matmul: 1-D operands get a unit dimension; batch dimensions broadcast.
    bool vectorA = a.size() == 1;
    bool vectorB = b.size() == 1;
    if (vectorA)
        a.insert(a.begin(), 1);
    if (vectorB)
        b.push_back(1);
    if (a[a.size() - 1] != b[b.size() - 2]) {
        unknown(info,
                "inner dimensions differ: " + std::to_string(a.back()) + " vs " +
                    std::to_string(b[b.size() - 2]));
        return;
    }
    GemmShape gemm;
    gemm.k = a.back();
    gemm.n = b.back();
    if (b.size() == 2) {
        // A batch of matrices times one matrix is one GEMM over all rows.
        gemm.m = product(a, 0, a.size() - 1);
    } else {
        gemm.m = a[a.size() - 2];
        std::vector<int64_t> batchA(a.begin(), a.end() - 2);
        std::vector<int64_t> batchB(b.begin(), b.end() - 2);
        std::size_t dims = std::max(batchA.size(), batchB.size());
        batchA.insert(batchA.begin(), dims - batchA.size(), 1);
        batchB.insert(batchB.begin(), dims - batchB.size(), 1);
        for (std::size_t i = 0; i < dims; ++i) {
            if (batchA[i] != batchB[i] && batchA[i] != 1 && batchB[i] != 1) {
                unknown(info, "batch dimensions do not broadcast");
                return;
            }
            gemm.batch *= std::max(batchA[i], batchB[i]);
        }
    }
    info.kind = gemm.batch == 1 ? OpKind::Gemm : OpKind::Bmm;
    info.gemms = {gemm};
}

void fromConvolution(OperatorInfo& info,
                     const Schema& schema,
                     const Inputs& inputs,
                     const std::optional<std::vector<int64_t>>& output)
{
    int inputIndex = schema.indexOf("input") >= 0 ? schema.indexOf("input") : 0;
    int weightIndex = schema.indexOf("weight") >= 0 ? schema.indexOf("weight") : 1;
    auto x = inputs.shape(static_cast<std::size_t>(inputIndex));
    auto w = inputs.shape(static_cast<std::size_t>(weightIndex));
    if (!x || !w || x->size() != 4 || w->size() != 4 || !positive(*x) || !positive(*w)) {
        unknown(info, "needs 4-D input and weight shapes (N, C, H, W) for a 2-D convolution");
        return;
    }
    if (int t = schema.indexOf("transposed");
        t >= 0 && static_cast<std::size_t>(t) < inputs.values.size() &&
        inputs.values[static_cast<std::size_t>(t)].text == "True") {
        unknown(info, "transposed convolution is not modelled as a GEMM");
        return;
    }
    std::vector<int64_t> groupsArg =
        intArgument(schema, inputs, "groups", 1).value_or(std::vector<int64_t>{1});
    int64_t groups = groupsArg.empty() || groupsArg[0] <= 0 ? 1 : groupsArg[0];
    int64_t hOut = 0;
    int64_t wOut = 0;
    if (output && output->size() == 4 && positive(*output)) {
        hOut = (*output)[2];
        wOut = (*output)[3];
    } else {
        auto stride = intArgument(schema, inputs, "stride", 2).value_or(std::vector<int64_t>{1, 1});
        auto dilation =
            intArgument(schema, inputs, "dilation", 2).value_or(std::vector<int64_t>{1, 1});
        auto padding = intArgument(schema, inputs, "padding", 2);
        if (!padding) {
            // conv2d.padding overload: "same" keeps the size (stride 1 only), "valid" pads 0.
            int p = schema.indexOf("padding");
            bool same = p >= 0 && static_cast<std::size_t>(p) < inputs.values.size() &&
                        inputs.values[static_cast<std::size_t>(p)].text == "same";
            padding = std::vector<int64_t>{0, 0};
            if (same) {
                hOut = (*x)[2];
                wOut = (*x)[3];
            }
        }
        if (hOut == 0) {
            auto outSize = [](int64_t in, int64_t pad, int64_t dil, int64_t kernel, int64_t st) {
                return st <= 0 ? 0 : (in + 2 * pad - dil * (kernel - 1) - 1) / st + 1;
            };
            hOut = outSize((*x)[2], (*padding)[0], dilation[0], (*w)[2], stride[0]);
            wOut = outSize((*x)[3], (*padding)[1], dilation[1], (*w)[3], stride[1]);
        }
        if (hOut <= 0 || wOut <= 0) {
            unknown(info, "output size does not follow from the input, stride and padding");
            return;
        }
    }
    GemmShape gemm;
    gemm.m = (*x)[0] * hOut * wOut;
    gemm.n = (*w)[0];
    // Weight holds Cin / groups channels: K = Cin * kh * kw / groups.
    gemm.k = (*w)[1] * (*w)[2] * (*w)[3];
    info.kind = OpKind::Conv2d;
    info.gemms = {gemm};
    if (groups > 1)
        info.note = "grouped convolution (" + std::to_string(groups) +
                    " groups) counted as one GEMM with K = Cin * kh * kw / groups";
}

void fromAttention(OperatorInfo& info, const Inputs& inputs, bool flashLayout)
{
    auto q = inputs.shape(0);
    auto k = inputs.shape(1);
    auto v = inputs.shape(2);
    if (!q || !k || !v || q->size() < 2 || q->size() != k->size() || q->size() != v->size() ||
        !positive(*q) || !positive(*k) || !positive(*v)) {
        unknown(info, "needs query, key and value shapes of equal rank >= 2");
        return;
    }
    std::size_t rank = q->size();
    int64_t batch = 0;
    int64_t lq = 0;
    int64_t lk = 0;
    if (flashLayout) {
        // _flash_attention_forward takes (batch, length, heads, head_dim).
        if (rank != 4) {
            unknown(info, "flash attention inputs must be 4-D (batch, length, heads, dim)");
            return;
        }
        batch = (*q)[0] * (*q)[2];
        lq = (*q)[1];
        lk = (*k)[1];
    } else {
        batch = product(*q, 0, rank - 2);
        lq = (*q)[rank - 2];
        lk = (*k)[rank - 2];
    }
    int64_t headDim = q->back();
    int64_t valueDim = v->back();
    info.kind = OpKind::Attention;
    info.gemms = {GemmShape{lq, lk, headDim, batch}, GemmShape{lq, valueDim, lk, batch}};
}

void fromPyTorch(OperatorInfo& info, const TraceNode& node, const std::string& schemaText)
{
    Schema schema = parseSchema(schemaText);
    info.source = OperatorInfo::Source::PyTorch;
    info.op = schema.op;
    Inputs inputs;
    if (std::optional<pb::IOInfo> io = TraceCodec::inputs(node)) {
        inputs.shapes = parseList(io->shapes());
        inputs.values = parseList(io->values());
        for (const PyValue& type : parseList(io->types()))
            inputs.types.push_back(type.text);
    }
    std::optional<std::vector<int64_t>> output;
    if (std::optional<pb::IOInfo> io = TraceCodec::outputs(node)) {
        std::vector<PyValue> shapes = parseList(io->shapes());
        if (!shapes.empty() && shapes[0].isIntList())
            output = shapes[0].ints();
    }
    for (const std::string& type : inputs.types) {
        info.dtype = dataTypeFromPyTorch(type);
        if (info.dtype != DataType::Unknown)
            break;
    }

    const std::string& op = schema.op;
    auto twoOperands = [&](std::size_t first) {
        auto a = inputs.shape(first);
        auto b = inputs.shape(first + 1);
        if (!a || !b || a->empty() || b->empty() || !positive(*a) || !positive(*b)) {
            unknown(info, op + ": input shapes missing or not positive");
            return;
        }
        fromMatmul(info, *a, *b);
    };
    if (op == "aten::mm" || op == "aten::bmm" || op == "aten::matmul") {
        twoOperands(0);
        if (info.kind != OpKind::Unknown && op != "aten::matmul" &&
            (inputs.shape(0)->size() != (op == "aten::mm" ? 2U : 3U) ||
             inputs.shape(1)->size() != inputs.shape(0)->size()))
            unknown(info, op + ": operands of the wrong rank");
    } else if (op == "aten::addmm" || op == "aten::baddbmm" || op == "aten::addbmm") {
        twoOperands(1);
    } else if (op == "aten::linear") {
        auto x = inputs.shape(0);
        auto w = inputs.shape(1);
        if (!x || !w || x->empty() || w->size() != 2 || !positive(*x) || !positive(*w) ||
            x->back() != (*w)[1]) {
            unknown(info, "aten::linear: needs input (..., K) and weight (N, K) shapes");
            return;
        }
        info.kind = OpKind::Gemm;
        info.gemms = {GemmShape{product(*x, 0, x->size() - 1), (*w)[0], (*w)[1], 1}};
    } else if (op == "aten::conv2d" || op == "aten::convolution" || op == "aten::_convolution" ||
               op == "aten::cudnn_convolution") {
        fromConvolution(info, schema, inputs, output);
    } else if (op == "aten::scaled_dot_product_attention" ||
               op == "aten::_scaled_dot_product_flash_attention" ||
               op == "aten::_scaled_dot_product_efficient_attention" ||
               op == "aten::_scaled_dot_product_cudnn_attention" ||
               op == "aten::_scaled_dot_product_attention_math") {
        fromAttention(info, inputs, false);
    } else if (op == "aten::_flash_attention_forward") {
        fromAttention(info, inputs, true);
    } else {
        unknown(info,
                "operator " + (op.empty() ? std::string("(unnamed)") : op) +
                    " is not modelled; roofline applies");
    }
}

void fromAttributes(OperatorInfo& info, const TraceNode& node)
{
    info.source = OperatorInfo::Source::Attributes;
    info.op.assign(*node.opKind());
    if (std::optional<std::string_view> dtype = node.dtype())
        info.dtype = dataTypeFromName(*dtype).value_or(DataType::Unknown);
    std::optional<OpKind> kind = opKindFromName(info.op);
    if (!kind || *kind == OpKind::Unknown) {
        unknown(info,
                "op_kind \"" + info.op +
                    "\" is not one of gemm, bmm, conv2d, attention, "
                    "elementwise, reduce");
        return;
    }
    info.kind = *kind;
    if (*kind == OpKind::Elementwise || *kind == OpKind::Reduce)
        return;
    std::optional<int64_t> m = node.gemmM();
    std::optional<int64_t> n = node.gemmN();
    std::optional<int64_t> k = node.gemmK();
    int64_t batch = node.gemmBatch().value_or(1);
    if (!m || !n || !k || *m <= 0 || *n <= 0 || *k <= 0 || batch <= 0) {
        unknown(info,
                "op_kind " + info.op +
                    " needs gemm_m, gemm_n, gemm_k > 0 (and gemm_batch "
                    "> 0 when given)");
        return;
    }
    GemmShape first{*m, *n, *k, batch};
    info.gemms = {first};
    if (*kind == OpKind::Attention) // P V: (Lq x Lk) times (Lk x head_dim)
        info.gemms.push_back(GemmShape{*m, *k, *n, batch});
}

} // namespace

std::string_view opKindName(OpKind kind)
{
    return opKindNames[static_cast<std::size_t>(kind)];
}

std::optional<OpKind> opKindFromName(std::string_view name)
{
    for (std::size_t i = 0; i < opKindNames.size(); ++i) {
        if (opKindNames[i] == name)
            return static_cast<OpKind>(i);
    }
    return std::nullopt;
}

std::string_view dataTypeName(DataType type)
{
    return dataTypeNames[static_cast<std::size_t>(type)];
}

std::optional<DataType> dataTypeFromName(std::string_view name)
{
    for (std::size_t i = 0; i < dataTypeNames.size(); ++i) {
        if (dataTypeNames[i] == name)
            return static_cast<DataType>(i);
    }
    return std::nullopt;
}

int bytesPerElement(DataType type)
{
    switch (type) {
    case DataType::Fp64:
        return 8;
    case DataType::Fp32:
    case DataType::Tf32:
        return 4;
    case DataType::Bf16:
    case DataType::Fp16:
        return 2;
    case DataType::Fp8:
    case DataType::Int8:
        return 1;
    case DataType::Unknown:
        return 0;
    }
    return 0;
}

DataType dataTypeFromPyTorch(std::string_view type)
{
    std::size_t open = type.find("Tensor(");
    if (open == std::string_view::npos)
        return DataType::Unknown;
    std::string_view element = type.substr(open + 7);
    element = element.substr(0, element.find(')'));
    if (element.rfind("c10::", 0) == 0)
        element.remove_prefix(5);
    if (element == "float")
        return DataType::Fp32;
    if (element == "double")
        return DataType::Fp64;
    if (element == "BFloat16")
        return DataType::Bf16;
    if (element == "Half")
        return DataType::Fp16;
    if (element.rfind("Float8_", 0) == 0)
        return DataType::Fp8;
    if (element == "signed char" || element == "qint8")
        return DataType::Int8;
    return DataType::Unknown;
}

std::string pytorchTensorType(DataType type)
{
    switch (type) {
    case DataType::Fp64:
        return "Tensor(double)";
    case DataType::Fp32:
    case DataType::Tf32:
        return "Tensor(float)";
    case DataType::Bf16:
        return "Tensor(c10::BFloat16)";
    case DataType::Fp16:
        return "Tensor(c10::Half)";
    case DataType::Fp8:
        return "Tensor(c10::Float8_e4m3fn)";
    case DataType::Int8:
        return "Tensor(signed char)";
    case DataType::Unknown:
        break;
    }
    return "Tensor";
}

double OperatorInfo::flops() const
{
    double total = 0;
    for (const GemmShape& gemm : gemms)
        total += gemm.flops();
    return total;
}

OperatorInfo operatorInfo(const TraceNode& node)
{
    OperatorInfo info;
    operatorInfo(node, info);
    return info;
}

void operatorInfo(const TraceNode& node, OperatorInfo& info)
{
    info.kind = OpKind::Unknown;
    info.dtype = DataType::Unknown;
    info.gemms.clear();
    info.source = OperatorInfo::Source::None;
    info.op.clear();
    info.note.clear();
    if (node.opKind()) {
        fromAttributes(info, node);
        return;
    }
    if (std::optional<std::string> schema = stringAttribute(node, "op_schema");
        schema && !schema->empty()) {
        fromPyTorch(info, node, *schema);
        return;
    }
    if (node.name.rfind("aten::", 0) == 0) {
        // "aten::mm(0)": the converter numbers repeated names; there is no argument list.
        fromPyTorch(info, node, node.name.substr(0, node.name.find('(')));
        return;
    }
    info.note = "no op_kind attribute, no op_schema and no aten:: name";
}

void applyOperatorInfo(TraceNode& node, const OperatorInfo& info)
{
    if (info.kind == OpKind::Unknown)
        throw Error("node " + std::to_string(node.id) +
                    ": cannot write operator attributes for an unknown operator kind");
    node.setOpKind(std::string(opKindName(info.kind)));
    if (info.dtype != DataType::Unknown)
        node.setDtype(std::string(dataTypeName(info.dtype)));
    if (info.gemms.empty())
        return;
    const GemmShape& gemm = info.gemms.front();
    node.setGemmM(gemm.m);
    node.setGemmN(gemm.n);
    node.setGemmK(gemm.k);
    node.setGemmBatch(gemm.batch);
    node.setNumOps(static_cast<int64_t>(std::llround(info.flops())));
}

} // namespace etsim::et
