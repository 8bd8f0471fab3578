#include "cosim/adapters/verilator/GemmTile.h"

#include "cosim/wire/Frame.h"
#include "kernel/IntMath.h"

#include <algorithm>
#include <limits>

namespace etsim::rtl {

namespace {

// Operands laid out as rtl/gemm_tile.sv reads them; results gathered back into row-major C.
class LaidOutMemory final : public TileMemory {
public:
    LaidOutMemory(const GemmTile& tile,
                  std::uint32_t m,
                  std::uint32_t n,
                  std::uint32_t k,
                  const std::vector<std::int8_t>& a,
                  const std::vector<std::int8_t>& b)
        : rows(tile.rows())
        , cols(tile.cols())
        , m(m)
        , n(n)
        , k(k)
        , aData(a)
        , bData(b)
        , c(static_cast<std::size_t>(m) * n, 0)
    {
    }

    // A word rb*K + kk, lane i: A[rb*rows + i][kk].
    std::int8_t a(std::uint64_t address, std::uint32_t lane) const override
    {
        const std::uint64_t row = address / k * rows + lane;
        return row < m ? aData[row * k + address % k] : std::int8_t{0};
    }
    // B word cb*K + kk, lane j: B[kk][cb*cols + j].
    std::int8_t b(std::uint64_t address, std::uint32_t lane) const override
    {
        const std::uint64_t col = address / k * cols + lane;
        return col < n ? bData[(address % k) * n + col] : std::int8_t{0};
    }
    void aWord(std::uint64_t address, std::int8_t* lanes, std::uint32_t count) const override
    {
        const std::uint64_t first = address / k * rows;
        const std::uint64_t column = address % k;
        for (std::uint32_t lane = 0; lane < count; ++lane) {
            const std::uint64_t row = first + lane;
            lanes[lane] = row < m ? aData[row * k + column] : std::int8_t{0};
        }
    }
    // B's lanes are one contiguous run of a row of B.
    void bWord(std::uint64_t address, std::int8_t* lanes, std::uint32_t count) const override
    {
        const std::uint64_t first = address / k * cols;
        const std::uint64_t present = first < n ? std::min<std::uint64_t>(count, n - first) : 0;
        if (present != 0) {
            const std::int8_t* row = bData.data() + (address % k) * n + first;
            std::copy(row, row + present, lanes);
        }
        std::fill(lanes + present, lanes + count, std::int8_t{0});
    }
    // C word f*rows + r of fold f = rb*colBlocks + cb.
    void write(std::uint64_t address, const std::vector<std::int32_t>& values) override
    {
        const std::uint64_t fold = address / rows;
        const std::uint64_t colBlocks = ceilDiv(n, cols);
        const std::uint64_t row = fold / colBlocks * rows + address % rows;
        for (std::uint32_t j = 0; j < cols; ++j) {
            const std::uint64_t col = fold % colBlocks * cols + j;
            if (row < m && col < n)
                c[row * n + col] = values[j];
        }
    }

    std::vector<std::int32_t> take() { return std::move(c); }

private:
    std::uint32_t rows;
    std::uint32_t cols;
    std::uint64_t m;
    std::uint64_t n;
    std::uint64_t k;
    const std::vector<std::int8_t>& aData;
    const std::vector<std::int8_t>& bData;
    std::vector<std::int32_t> c;
};

} // namespace

std::uint64_t formulaCycles(std::uint32_t rows,
                            std::uint32_t cols,
                            std::uint64_t m,
                            std::uint64_t n,
                            std::uint64_t k,
                            std::uint32_t latency)
{
    if (m == 0 || n == 0 || k == 0)
        return 0;
    // Folds come in at most four sizes: full or edge row block × full or edge column block.
    const std::uint64_t fullRows = m / rows;
    const std::uint64_t edgeRows = m % rows;
    const std::uint64_t fullCols = n / cols;
    const std::uint64_t edgeCols = n % cols;
    auto fold = [&](std::uint64_t mf, std::uint64_t nf) { return k + latency + 2 * mf + nf - 1; };
    std::uint64_t cycles = fullRows * fullCols * fold(rows, cols);
    if (edgeCols != 0)
        cycles += fullRows * fold(rows, edgeCols);
    if (edgeRows != 0) {
        cycles += fullCols * fold(edgeRows, cols);
        if (edgeCols != 0)
            cycles += fold(edgeRows, edgeCols);
    }
    return cycles;
}

GemmProduct multiply(GemmTile& tile,
                     std::uint32_t m,
                     std::uint32_t n,
                     std::uint32_t k,
                     const std::vector<std::int8_t>& a,
                     const std::vector<std::int8_t>& b,
                     std::uint32_t latency)
{
    if (a.size() != static_cast<std::size_t>(m) * k || b.size() != static_cast<std::size_t>(k) * n)
        throw cosim::CosimError("multiply: A must hold M*K and B K*N values");
    LaidOutMemory memory(tile, m, n, k, a, b);
    TileCommand command;
    command.m = m;
    command.n = n;
    command.k = k;
    GemmProduct product;
    product.cycles = tile.run(command, latency, memory);
    product.c = memory.take();
    return product;
}

std::uint64_t timeGemm(GemmTile& tile, GemmDims dims, std::uint32_t latency, FoldMode mode)
{
    if (dims.m == 0 || dims.n == 0 || dims.k == 0)
        return 0;
    constexpr std::uint64_t limit = std::numeric_limits<std::uint32_t>::max();
    if (dims.k > limit || (mode == FoldMode::Full && (dims.m > limit || dims.n > limit)))
        throw cosim::CosimError("GEMM " + std::to_string(dims.m) + "x" + std::to_string(dims.n) +
                                "x" + std::to_string(dims.k) +
                                " exceeds the tile's 32-bit command fields");
    ZeroMemory memory;
    auto runFold = [&](std::uint64_t m, std::uint64_t n) {
        TileCommand command;
        command.m = static_cast<std::uint32_t>(m);
        command.n = static_cast<std::uint32_t>(n);
        command.k = static_cast<std::uint32_t>(dims.k);
        return tile.run(command, latency, memory);
    };
    if (mode == FoldMode::Full)
        return runFold(dims.m, dims.n);

    const std::uint64_t rows = tile.rows();
    const std::uint64_t cols = tile.cols();
    const std::uint64_t fullRows = dims.m / rows;
    const std::uint64_t edgeRows = dims.m % rows;
    const std::uint64_t fullCols = dims.n / cols;
    const std::uint64_t edgeCols = dims.n % cols;
    std::uint64_t cycles = 0;
    if (fullRows != 0 && fullCols != 0)
        cycles += fullRows * fullCols * runFold(rows, cols);
    if (fullRows != 0 && edgeCols != 0)
        cycles += fullRows * runFold(rows, edgeCols);
    if (edgeRows != 0 && fullCols != 0)
        cycles += fullCols * runFold(edgeRows, cols);
    if (edgeRows != 0 && edgeCols != 0)
        cycles += runFold(edgeRows, edgeCols);
    return cycles;
}

} // namespace etsim::rtl
