#pragma once
// What a compute node does, as etsim's accelerator models read it (docs/operators.md):
// the operator kind, the element type and the GEMM shapes, from the etsim attributes
// (op_kind, gemm_m, gemm_n, gemm_k, gemm_batch, dtype) when a node carries them, otherwise
// from a PyTorch-converted node's operator schema (op_schema attribute) and input
// shapes/types (Node.inputs).
//
// Never throws on odd input: a node that cannot be understood is OpKind::Unknown, with
// `note` saying why, and the accelerator falls back to roofline for it.

#include "et_driver/TraceNode.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etsim::et {

enum class OpKind : uint8_t {
    Unknown,
    Gemm,        // one matrix product, batch 1
    Bmm,         // batched matrix product
    Conv2d,      // 2-D convolution as an implicit GEMM
    Attention,   // scaled dot-product attention: Q K^T, then P V
    Elementwise, // named by op_kind only; cost from num_ops / tensor_size
    Reduce,      // named by op_kind only; cost from num_ops / tensor_size
};

enum class DataType : uint8_t {
    Unknown,
    Fp64,
    Fp32,
    Tf32,
    Bf16,
    Fp16,
    Fp8,
    Int8,
};

// "gemm", "bmm", "conv2d", "attention", "elementwise", "reduce", "unknown".
std::string_view opKindName(OpKind kind);
std::optional<OpKind> opKindFromName(std::string_view name);
// "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "unknown".
std::string_view dataTypeName(DataType type);
std::optional<DataType> dataTypeFromName(std::string_view name);
// Bytes per element in memory (tf32 is stored as 4 bytes); 0 for Unknown.
int bytesPerElement(DataType type);
// The element type of a PyTorch type string ("Tensor(c10::BFloat16)" -> Bf16,
// "GenericList[Tensor(float)]" -> Fp32); Unknown when it names no floating/int8 tensor.
DataType dataTypeFromPyTorch(std::string_view type);
// The PyTorch type string of a tensor of `type` ("Tensor(c10::BFloat16)"), which
// dataTypeFromPyTorch reads back; "Tensor" for Unknown (tf32 is stored as float).
std::string pytorchTensorType(DataType type);

// C[batch][m][n] += A[batch][m][k] * B[batch][k][n].
struct GemmShape {
    int64_t m = 0;
    int64_t n = 0;
    int64_t k = 0;
    int64_t batch = 1;

    // Multiply-adds counted as two operations: 2 * m * n * k * batch.
    double flops() const
    {
        return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
               static_cast<double>(batch);
    }
    bool operator==(const GemmShape& other) const
    {
        return m == other.m && n == other.n && k == other.k && batch == other.batch;
    }
};

struct OperatorInfo {
    enum class Source : uint8_t {
        None,       // nothing usable on the node
        Attributes, // etsim's op_kind / gemm_* / dtype attributes
        PyTorch,    // op_schema + inputs of a PyTorch-converted node
    };

    OpKind kind = OpKind::Unknown;
    DataType dtype = DataType::Unknown;
    // One GEMM for gemm/bmm/conv2d, two for attention (Q K^T then P V), none otherwise.
    std::vector<GemmShape> gemms;
    Source source = Source::None;
    // The operator as named by the trace ("aten::mm", or the op_kind text).
    std::string op;
    // Why kind is Unknown (or what was assumed), for diagnostics; empty when all is clear.
    std::string note;

    // Sum of the GEMMs' flops(); 0 when there is none.
    double flops() const;
};

// Reads the node as described at the top of this file.
OperatorInfo operatorInfo(const TraceNode& node);
// The same into `info`, whose strings and GEMM list keep their capacity (the driver lowers
// every node through one).
void operatorInfo(const TraceNode& node, OperatorInfo& info);

// Writes op_kind, dtype (when known), gemm_m/n/k/batch (from the first GEMM; for attention
// the first GEMM is Q K^T, i.e. m = query length, n = key length, k = head dim) and num_ops
// (= flops(), rounded) when there is a GEMM. Attributes the info has no value for are left as
// they are. Throws etsim::Error for kind Unknown (there is nothing to write).
void applyOperatorInfo(TraceNode& node, const OperatorInfo& info);

} // namespace etsim::et
