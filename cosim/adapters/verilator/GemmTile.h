#pragma once
// The C++ side of the RTL GEMM tile engine (rtl/gemm_tile.sv): a Verilated model driven clock
// by clock from a plain loop, with a memory of configurable latency feeding its operands.
// No SystemC: etsim-rtl (a PeerSession user) and the tests link this directly.
//
//     std::unique_ptr<GemmTile> tile = makeGemmTile(16, 16);   // a variant built by CMake
//     GemmProduct product = multiply(*tile, m, n, k, a, b, 2); // C = A x B, cycles counted
//     std::uint64_t cycles = timeGemm(*tile, {m, n, k}, 2, FoldMode::Sampled);

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace etsim::rtl {

/// Operand memory behind the tile's read ports: words of `rows` (A) or `cols` (B) signed
/// 8-bit lanes, answered `latency` cycles after the request; result rows are handed to
/// `write` (lanes of signed 32-bit accumulators). A memory without words answers zeros
/// (timing-only runs).
class TileMemory {
public:
    virtual ~TileMemory() = default;
    /// Lane `lane` of A word `address` (0 when absent).
    virtual std::int8_t a(std::uint64_t address, std::uint32_t lane) const = 0;
    virtual std::int8_t b(std::uint64_t address, std::uint32_t lane) const = 0;
    /// Lanes 0..count-1 of A (B) word `address` into `lanes`: the tile reads whole words
    /// once per cycle, so a memory with a cheaper word read overrides these.
    virtual void aWord(std::uint64_t address, std::int8_t* lanes, std::uint32_t count) const
    {
        for (std::uint32_t lane = 0; lane < count; ++lane)
            lanes[lane] = a(address, lane);
    }
    virtual void bWord(std::uint64_t address, std::int8_t* lanes, std::uint32_t count) const
    {
        for (std::uint32_t lane = 0; lane < count; ++lane)
            lanes[lane] = b(address, lane);
    }
    /// One result row: `values` has one entry per array column.
    virtual void write(std::uint64_t address, const std::vector<std::int32_t>& values) = 0;
};

/// Answers zeros and drops results: for timing.
class ZeroMemory final : public TileMemory {
public:
    std::int8_t a(std::uint64_t, std::uint32_t) const override { return 0; }
    std::int8_t b(std::uint64_t, std::uint32_t) const override { return 0; }
    void aWord(std::uint64_t, std::int8_t* lanes, std::uint32_t count) const override
    {
        std::fill(lanes, lanes + count, std::int8_t{0});
    }
    void bWord(std::uint64_t, std::int8_t* lanes, std::uint32_t count) const override
    {
        std::fill(lanes, lanes + count, std::int8_t{0});
    }
    void write(std::uint64_t, const std::vector<std::int32_t>&) override {}
};

/// One command of the engine (word addresses, see rtl/gemm_tile.sv for the layout).
struct TileCommand {
    std::uint32_t m = 0;
    std::uint32_t n = 0;
    std::uint32_t k = 0;
    std::uint32_t aAddress = 0;
    std::uint32_t bAddress = 0;
    std::uint32_t cAddress = 0;
};

/// One Verilated instance of gemm_tile with fixed ROWS x COLS.
class GemmTile {
public:
    virtual ~GemmTile() = default;
    virtual std::uint32_t rows() const = 0;
    virtual std::uint32_t cols() const = 0;
    /// Runs `command` to `done` with read latency `latency` (>= 1 cycles) and returns the
    /// cycles from the edge accepting the command to the edge raising done. Throws
    /// etsim::cosim::CosimError when the block does not finish within `cycleLimit` cycles.
    virtual std::uint64_t
    run(const TileCommand& command, std::uint32_t latency, TileMemory& memory) = 0;
    /// Clock edges simulated so far (for cycles-per-second figures).
    virtual std::uint64_t edges() const = 0;

    static constexpr std::uint64_t cycleLimit = 1ull << 40;
};

/// Array sizes built into this program, as (rows, cols).
std::vector<std::pair<std::uint32_t, std::uint32_t>> builtTileSizes();
/// A fresh instance; throws etsim::cosim::CosimError naming the built sizes for another.
std::unique_ptr<GemmTile> makeGemmTile(std::uint32_t rows, std::uint32_t cols);

/// The documented cycle formula of rtl/gemm_tile.sv:
/// sum over folds of (K + L + 2·m_f + n_f − 1), 0 when M, N or K is 0.
std::uint64_t formulaCycles(std::uint32_t rows,
                            std::uint32_t cols,
                            std::uint64_t m,
                            std::uint64_t n,
                            std::uint64_t k,
                            std::uint32_t latency);

struct GemmProduct {
    std::vector<std::int32_t> c; ///< M x N, row-major
    std::uint64_t cycles = 0;
};

/// C = A x B on the tile (A: M x K, B: K x N, row-major, signed 8-bit), the operands laid
/// out in a memory with read latency `latency`.
GemmProduct multiply(GemmTile& tile,
                     std::uint32_t m,
                     std::uint32_t n,
                     std::uint32_t k,
                     const std::vector<std::int8_t>& a,
                     const std::vector<std::int8_t>& b,
                     std::uint32_t latency);

enum class FoldMode : std::uint8_t {
    /// One command for the whole GEMM: every fold runs clock by clock.
    Full,
    /// One command per distinct fold size (at most four: full or edge rows × full or edge
    /// columns), its cycles multiplied by how many folds have that size. Equal to Full, since
    /// folds run one after another from the same state (tests/rtl prove it on small cases).
    Sampled,
};

struct GemmDims {
    std::uint64_t m = 0;
    std::uint64_t n = 0;
    std::uint64_t k = 0;
};

/// Cycles of a GEMM on the tile (timing only, zero operands). Full needs M, N, K < 2^32.
std::uint64_t timeGemm(GemmTile& tile, GemmDims dims, std::uint32_t latency, FoldMode mode);

} // namespace etsim::rtl
