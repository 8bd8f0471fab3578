// The RTL tile engine (cosim/adapters/verilator/rtl/gemm_tile.sv) against a reference
// multiplication, its documented cycle formula, and the accelerator model's systolic formula.

#include "cosim/adapters/verilator/GemmTile.h"

#include "cosim/wire/Frame.h"
#include "models/accel/compute/SystolicTiming.h"

#include <gtest/gtest.h>

#include <random>

namespace etsim::rtl {
namespace {

std::vector<std::int32_t> reference(std::uint32_t m,
                                    std::uint32_t n,
                                    std::uint32_t k,
                                    const std::vector<std::int8_t>& a,
                                    const std::vector<std::int8_t>& b)
{
    std::vector<std::int32_t> c(static_cast<std::size_t>(m) * n, 0);
    for (std::uint32_t i = 0; i < m; ++i)
        for (std::uint32_t j = 0; j < n; ++j)
            for (std::uint32_t x = 0; x < k; ++x)
                c[i * n + j] += std::int32_t{a[i * k + x]} * std::int32_t{b[x * n + j]};
    return c;
}

std::vector<std::int8_t> randomMatrix(std::size_t size, std::mt19937& random)
{
    std::uniform_int_distribution<int> value(-128, 127);
    std::vector<std::int8_t> matrix(size);
    for (std::int8_t& element : matrix)
        element = static_cast<std::int8_t>(value(random));
    return matrix;
}

struct Shape {
    std::uint32_t m;
    std::uint32_t n;
    std::uint32_t k;
};

// Edge folds in rows and columns, one element, K = 1, shapes smaller and larger than arrays.
const Shape smallShapes[] = {
    {1, 1, 1}, {4, 4, 4}, {3, 5, 7}, {16, 16, 16}, {17, 9, 3}, {33, 20, 11}, {8, 40, 1}};

TEST(GemmTile, BuiltSizesIncludeSeveralArrays)
{
    auto sizes = builtTileSizes();
    ASSERT_GE(sizes.size(), 3u);
    EXPECT_EQ(sizes.front(), std::make_pair(4u, 4u));
    EXPECT_EQ(sizes.back(), std::make_pair(16u, 16u));
}

TEST(GemmTile, ProductsEqualReferenceAndCyclesEqualFormula)
{
    std::mt19937 random(7);
    for (const auto& [rows, cols] : builtTileSizes()) {
        std::unique_ptr<GemmTile> tile = makeGemmTile(rows, cols);
        ASSERT_EQ(tile->rows(), rows);
        ASSERT_EQ(tile->cols(), cols);
        for (const Shape& shape : smallShapes) {
            for (std::uint32_t latency : {1u, 2u, 5u}) {
                SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " array, " +
                             std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
                             std::to_string(shape.k) + ", latency " + std::to_string(latency));
                auto a = randomMatrix(static_cast<std::size_t>(shape.m) * shape.k, random);
                auto b = randomMatrix(static_cast<std::size_t>(shape.k) * shape.n, random);
                GemmProduct product = multiply(*tile, shape.m, shape.n, shape.k, a, b, latency);
                EXPECT_EQ(product.c, reference(shape.m, shape.n, shape.k, a, b));
                EXPECT_EQ(product.cycles,
                          formulaCycles(rows, cols, shape.m, shape.n, shape.k, latency));
            }
        }
    }
}

TEST(GemmTile, FormulaByHand)
{
    // One full fold of a 4x4 array, K = 8, latency 2: 8 + 2 + 2*4 + 4 - 1 = 21.
    EXPECT_EQ(formulaCycles(4, 4, 4, 4, 8, 2), 21u);
    // 6x5 on 4x4: folds (4,4) (4,1) (2,4) (2,1) with K = 3, L = 1:
    // (3+1+8+4-1) + (3+1+8+1-1) + (3+1+4+4-1) + (3+1+4+1-1) = 15 + 12 + 11 + 8 = 46.
    EXPECT_EQ(formulaCycles(4, 4, 6, 5, 3, 1), 46u);
    EXPECT_EQ(formulaCycles(4, 4, 0, 5, 3, 1), 0u);
    auto tile = makeGemmTile(4, 4);
    EXPECT_EQ(timeGemm(*tile, {6, 5, 3}, 1, FoldMode::Full), 46u);
}

TEST(GemmTile, EmptyGemmCompletesAtOnce)
{
    auto tile = makeGemmTile(4, 4);
    ZeroMemory memory;
    TileCommand command;
    command.m = 4;
    command.n = 0;
    command.k = 4;
    EXPECT_EQ(tile->run(command, 1, memory), 0u);
    // The block is ready again: a real GEMM after it still matches the formula.
    EXPECT_EQ(timeGemm(*tile, {4, 4, 4}, 1, FoldMode::Full), formulaCycles(4, 4, 4, 4, 4, 1));
}

TEST(GemmTile, OneFoldPerSizeTimesFoldCountEqualsFullRun)
{
    for (const auto& [rows, cols] : builtTileSizes()) {
        auto tile = makeGemmTile(rows, cols);
        for (const Shape& shape :
             {Shape{37, 23, 5}, Shape{64, 64, 32}, Shape{16, 48, 9}, Shape{5, 70, 2}}) {
            SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " array, " +
                         std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
                         std::to_string(shape.k));
            const std::uint64_t full =
                timeGemm(*tile, {shape.m, shape.n, shape.k}, 3, FoldMode::Full);
            EXPECT_EQ(timeGemm(*tile, {shape.m, shape.n, shape.k}, 3, FoldMode::Sampled), full);
            EXPECT_EQ(full, formulaCycles(rows, cols, shape.m, shape.n, shape.k, 3));
        }
    }
}

// The accelerator model's systolic formula (models/accel/compute/SystolicTiming.h) for an
// output-stationary array of the same size: per fold 2R + C + K - 2. The RTL adds the memory
// latency and its capture register, L + 1 cycles per fold, so for M, N multiples of the array
// the RTL takes exactly (L + 1) * folds cycles more: (L + 1) / (2R + C + K - 2) of the model,
// under 2 % for K >= 256 on arrays up to 16x16 at L = 2 and under 10 % for K >= 32.
TEST(GemmTile, WithinStatedPercentOfTheSystolicModel)
{
    constexpr std::uint32_t latency = 2;
    for (const auto& [rows, cols] : builtTileSizes()) {
        accel::SystolicParams params;
        params.rows = rows;
        params.cols = cols;
        params.tileRows = rows;
        params.tileCols = cols;
        params.clock = Frequency::fromHz(1e9);
        accel::SystolicTiming model(params, accel::RooflineTiming({}));
        auto tile = makeGemmTile(rows, cols);
        for (const GemmDims dims : {GemmDims{rows, cols, 32},
                                    GemmDims{64, 64, 64},
                                    GemmDims{128, 64, 256},
                                    GemmDims{256, 256, 256}}) {
            SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols) + " array, " +
                         std::to_string(dims.m) + "x" + std::to_string(dims.n) + "x" +
                         std::to_string(dims.k));
            const auto plan = model.plan(GemmShape{dims.m, dims.n, dims.k, 1});
            const std::uint64_t rtl = timeGemm(*tile, dims, latency, FoldMode::Sampled);
            EXPECT_EQ(rtl, plan.cycles + (latency + 1) * plan.folds);
            const double error = (static_cast<double>(rtl) - static_cast<double>(plan.cycles)) /
                                 static_cast<double>(plan.cycles);
            EXPECT_LE(error, dims.k >= 256 ? 0.02 : 0.10);
            std::printf("%ux%u array, GEMM %llux%llux%llu: RTL %llu cycles, model %llu, "
                        "+%.2f %%\n",
                        rows,
                        cols,
                        static_cast<unsigned long long>(dims.m),
                        static_cast<unsigned long long>(dims.n),
                        static_cast<unsigned long long>(dims.k),
                        static_cast<unsigned long long>(rtl),
                        static_cast<unsigned long long>(plan.cycles),
                        100.0 * error);
        }
    }
}

TEST(GemmTile, FullRunOf256CubedOn16x16)
{
    auto tile = makeGemmTile(16, 16);
    EXPECT_EQ(timeGemm(*tile, {256, 256, 256}, 2, FoldMode::Full),
              formulaCycles(16, 16, 256, 256, 256, 2));
    EXPECT_EQ(formulaCycles(16, 16, 256, 256, 256, 2), 256u * (256 + 2 + 32 + 16 - 1));
}

TEST(GemmTile, Errors)
{
    try {
        makeGemmTile(12, 12);
        FAIL() << "no exception";
    } catch (const cosim::CosimError& error) {
        EXPECT_EQ(std::string(error.what()),
                  "no RTL tile of 12x12 is built into this program (built: 4x4, 8x4, 16x16; add "
                  "the size to ETSIM_RTL_TILE_SIZES and rebuild)");
    }
    auto tile = makeGemmTile(4, 4);
    ZeroMemory memory;
    try {
        tile->run(TileCommand{4, 4, 4, 0, 0, 0}, 0, memory);
        FAIL() << "no exception";
    } catch (const cosim::CosimError& error) {
        EXPECT_EQ(std::string(error.what()),
                  "gemm_tile: the memory latency must be at least 1 cycle");
    }
    try {
        timeGemm(*tile, {std::uint64_t{1} << 33, 4, 4}, 1, FoldMode::Full);
        FAIL() << "no exception";
    } catch (const cosim::CosimError& error) {
        EXPECT_NE(std::string(error.what()).find("exceeds the tile's 32-bit command fields"),
                  std::string::npos);
    }
    try {
        multiply(*tile, 2, 2, 2, std::vector<std::int8_t>(3), std::vector<std::int8_t>(4), 1);
        FAIL() << "no exception";
    } catch (const cosim::CosimError& error) {
        EXPECT_EQ(std::string(error.what()), "multiply: A must hold M*K and B K*N values");
    }
}

} // namespace
} // namespace etsim::rtl
