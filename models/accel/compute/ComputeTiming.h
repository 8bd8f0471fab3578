#pragma once
// What a compute timing calculator returns, and the calculators of one compute unit: a
// tensor-unit model chosen by configuration (roofline, GPU tiles, systolic array) and the
// vector unit. Plain C++ (no SystemC processes), so tests and benchmarks use them directly.
//
// A calculator sees only the node's extension fields: kind of operator, data type, GEMM shape,
// FLOPs and bytes. The bytes are taken as on-chip traffic: the accelerator streams what does
// not fit in SRAM from HBM itself and overlaps it with the compute (Accelerator.h).

#include "kernel/Extensions.h"
#include "kernel/Units.h"

#include <cstdint>

namespace etsim::accel {

/// Which model produced a time (and the fidelity level reported in the stats).
enum class Fidelity : std::uint8_t { Roofline, GpuTiles, Systolic, Vector };
const char* toString(Fidelity fidelity);

struct ComputeEstimate {
    /// Duration of the node on one unit, launch overhead included.
    Time time;
    Fidelity fidelity = Fidelity::Roofline;
    /// A shape-based model fell back to the roofline (no GEMM shape, or a data type it has no
    /// per-clock rate for).
    bool fallback = false;
    /// The memory term of the roofline decided the time.
    bool memoryBound = false;
    /// Useful operations of the node (FLOP).
    double flops = 0.0;
};

/// The FLOPs of a node: its own count, else 2·m·n·k·batch of its GEMM shape.
double nodeFlops(const EtNodeInfo& node);

/// The bytes of a node: its own count, else the GEMM's lower bound
/// (m·k + k·n + m·n)·batch·element size.
double nodeBytes(const EtNodeInfo& node);

/// Whether a compute node runs on the tensor unit (GEMM, convolution, attention, or any node
/// with a GEMM shape or unknown operator with FLOPs) rather than on the vector unit.
bool usesTensorUnit(const EtNodeInfo& node);

} // namespace etsim::accel
