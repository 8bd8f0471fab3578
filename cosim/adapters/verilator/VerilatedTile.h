#pragma once
// GemmTile over one Verilated variant of rtl/gemm_tile.sv (class `Model`, generated with
// --prefix per array size). Only TileVariants.cpp, which includes the generated headers,
// instantiates it.

#include "cosim/adapters/verilator/GemmTile.h"
#include "cosim/wire/Frame.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>
#include <verilated.h>

namespace etsim::rtl {

namespace detail {

// Verilator maps ports of up to 64 bits to integers and wider ones to VlWide (32-bit words);
// lanes are little-endian within the port, as in rtl/gemm_tile.sv.
template <typename Port>
void putBytes(Port& port, const std::int8_t* lanes, std::uint32_t count)
{
    if constexpr (std::is_integral_v<Port>) {
        std::uint64_t value = 0;
        for (std::uint32_t lane = 0; lane < count; ++lane)
            value |= std::uint64_t{static_cast<std::uint8_t>(lanes[lane])} << (8 * lane);
        port = static_cast<Port>(value);
    } else {
        for (std::uint32_t word = 0; word * 4 < count; ++word) {
            std::uint32_t value = 0;
            for (std::uint32_t byte = 0; byte < 4 && word * 4 + byte < count; ++byte)
                value |= std::uint32_t{static_cast<std::uint8_t>(lanes[word * 4 + byte])}
                         << (8 * byte);
            port[word] = value;
        }
    }
}

// Lanes are 32 bits wide, so a lane never straddles two 32-bit words.
template <typename Port>
std::uint32_t getLane(const Port& port, std::uint32_t lane, std::uint32_t width)
{
    const std::uint64_t mask = (std::uint64_t{1} << width) - 1;
    const std::uint32_t bit = lane * width;
    if constexpr (std::is_integral_v<Port>) {
        return static_cast<std::uint32_t>((static_cast<std::uint64_t>(port) >> bit) & mask);
    } else {
        return static_cast<std::uint32_t>((port[bit / 32] >> (bit % 32)) & mask);
    }
}

} // namespace detail

template <typename Model>
class VerilatedTile final : public GemmTile {
public:
    VerilatedTile(std::uint32_t rows, std::uint32_t cols)
        : rowCount(rows), colCount(cols), context(std::make_unique<VerilatedContext>())
    {
        model = std::make_unique<Model>(context.get(), "gemm_tile");
        model->clk = 0;
        model->rst = 1;
        model->cmd_valid = 0;
        model->mem_rd_valid = 0;
        model->eval();
        edge();
        edge();
        model->rst = 0;
        model->eval();
    }
    ~VerilatedTile() override { model->final(); }

    std::uint32_t rows() const override { return rowCount; }
    std::uint32_t cols() const override { return colCount; }
    std::uint64_t edges() const override { return edgeCount; }

    std::uint64_t
    run(const TileCommand& command, std::uint32_t latency, TileMemory& memory) override
    {
        if (latency == 0)
            throw cosim::CosimError("gemm_tile: the memory latency must be at least 1 cycle");
        // Requests issued in cycle c are answered in cycle c + latency: a ring of `latency`
        // slots, each read and then reused in the same cycle.
        struct Read {
            bool valid = false;
            std::uint64_t a = 0;
            std::uint64_t b = 0;
        };
        std::vector<Read> ring(latency);
        std::vector<std::int8_t> lanes(std::max(rowCount, colCount));
        std::vector<std::int32_t> row(colCount);

        model->cmd_m = command.m;
        model->cmd_n = command.n;
        model->cmd_k = command.k;
        model->cmd_a_addr = command.aAddress;
        model->cmd_b_addr = command.bAddress;
        model->cmd_c_addr = command.cAddress;
        model->cmd_valid = 1;
        bool accepted = false;
        std::uint64_t cycles = 0;
        std::size_t next = 0;
        for (;;) {
            // The outputs read here are registers (or logic of registers only) settled by the
            // last evaluation, so inputs and outputs need no evaluation of their own before
            // the edge; the data ports are left stale when no word arrives (the block gates
            // them with mem_rd_valid).
            Read& slot = ring[next];
            next = next + 1 == latency ? 0 : next + 1;
            model->mem_rd_valid = slot.valid ? 1 : 0;
            if (slot.valid) {
                memory.aWord(slot.a, lanes.data(), rowCount);
                detail::putBytes(model->mem_a_data, lanes.data(), rowCount);
                memory.bWord(slot.b, lanes.data(), colCount);
                detail::putBytes(model->mem_b_data, lanes.data(), colCount);
            }
            slot.valid = model->mem_rd_en != 0;
            slot.a = model->mem_a_addr;
            slot.b = model->mem_b_addr;
            const bool acceptNow = !accepted && model->cmd_ready != 0;
            edge();
            if (acceptNow) {
                accepted = true;
                model->cmd_valid = 0;
            } else if (accepted) {
                ++cycles;
            }
            if (model->c_wr_en != 0) {
                for (std::uint32_t lane = 0; lane < colCount; ++lane)
                    row[lane] =
                        static_cast<std::int32_t>(detail::getLane(model->c_wr_data, lane, 32));
                memory.write(model->c_wr_addr, row);
            }
            if (accepted && model->done != 0)
                return cycles;
            if (cycles > cycleLimit)
                throw cosim::CosimError("gemm_tile: no done after " + std::to_string(cycles) +
                                        " cycles");
        }
    }

private:
    void edge()
    {
        model->clk = 1;
        model->eval();
        model->clk = 0;
        model->eval();
        ++edgeCount;
    }

    std::uint32_t rowCount;
    std::uint32_t colCount;
    std::unique_ptr<VerilatedContext> context;
    std::unique_ptr<Model> model;
    std::uint64_t edgeCount = 0;
};

} // namespace etsim::rtl
