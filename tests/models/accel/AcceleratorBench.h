#pragma once
// The accelerator test bench of AcceleratorTest.cpp and AcceleratorPresetTest.cpp: a driver that
// sends nodes through nb_transport and records their completions, and the accelerator wired to
// a fixed-bandwidth memory standing in for HBM.

#include "kernel/PayloadPool.h"
#include "kernel/ScTime.h"
#include "models/accel/Accelerator.h"
#include "tests/support/AccelConfigs.h"
#include "tests/support/StatValue.h"
#include "tests/support/TestTargets.h"

#include <gtest/gtest.h>
#include <tlm_utils/simple_initiator_socket.h>

#include <string>
#include <vector>

namespace etsim::accel::testbench {

using test::FixedMemoryTarget;

// The tests of streaming mechanics (chunks, staging buffers, units) below give a node a known
// number of bytes to stream with the legacy per-node shortcut (the first sram.capacity bytes of
// a node are on chip); what the residency model streams is tested in OnChipMemoryTest and in
// ResidencyStreamsMissesAndWritesThroughTheDma below.
inline AccelConfig legacy(AccelConfig config)
{
    config.sram.policy = SramPolicy::Legacy;
    return config;
}

// Round numbers (tests/support/AccelConfigs.h): 1 TFLOP/s, 1 MB of SRAM at 1 TB/s, 100 kB DMA
// chunks, no launch overhead, efficiencies 1. The test memory moves 100 GB/s (1 us per chunk).
inline AccelConfig testConfig(std::uint32_t units = 1)
{
    return legacy(test::roundAccelConfig(units));
}

inline EtNodeInfo node(std::uint64_t id,
                       NodeKind kind,
                       std::uint64_t flops,
                       std::uint64_t bytes,
                       OperatorKind op = OperatorKind::Gemm)
{
    EtNodeInfo info;
    info.rank = RankId{0};
    info.node = NodeId{id};
    info.kind = kind;
    info.flops = flops;
    info.bytes = bytes;
    info.op = op;
    info.dataType = DataType::Bf16;
    return info;
}

// Sends its nodes at time 0 through nb_transport and records each completion time (ps).
class Driver final : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<Driver> socket;

    SC_HAS_PROCESS(Driver);
    Driver(sc_core::sc_module_name name, std::vector<EtNodeInfo> nodes)
        : sc_module(name), socket("socket"), nodes(std::move(nodes)), pool("driver.pool")
    {
        finished.assign(this->nodes.size(), 0);
        socket.register_nb_transport_bw(this, &Driver::nbTransportBw);
        SC_METHOD(issue);
    }

    std::vector<std::uint64_t> finished;
    std::vector<tlm::tlm_response_status> status;
    /// Payloads still out of the pool: held by a target that has not answered.
    std::uint64_t outstanding() const { return pool.inUse(); }

private:
    void issue()
    {
        status.assign(nodes.size(), tlm::TLM_INCOMPLETE_RESPONSE);
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            tlm::tlm_generic_payload& payload = pool.acquire();
            payload.set_command(tlm::TLM_READ_COMMAND);
            payload.set_extension(new EtNodeExtension(nodes[i]));
            tlm::tlm_phase phase = tlm::BEGIN_REQ;
            sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
            tlm::tlm_sync_enum answer = tlm::TLM_ACCEPTED;
            try {
                answer = socket->nb_transport_fw(payload, phase, delay);
            } catch (...) {
                // A target's error report stopped the run; the reference is still ours.
                payload.release();
                throw;
            }
            EXPECT_EQ(answer, tlm::TLM_UPDATED);
            EXPECT_EQ(phase, tlm::END_REQ);
            payload.release();
        }
    }

    tlm::tlm_sync_enum
    nbTransportBw(tlm::tlm_generic_payload& payload, tlm::tlm_phase& phase, sc_core::sc_time& delay)
    {
        EXPECT_EQ(phase, tlm::BEGIN_RESP);
        std::uint64_t id = toUnderlying(EtNodeExtension::get(payload).info.node);
        finished[id] = fromScTime(sc_core::sc_time_stamp() + delay).ps();
        status[id] = payload.get_response_status();
        return tlm::TLM_COMPLETED;
    }

    std::vector<EtNodeInfo> nodes;
    PayloadPool pool;
};

// An accelerator wired to the fixed memory and driven by a Driver.
struct Bench {
    Bench(const AccelConfig& config, std::vector<EtNodeInfo> nodes)
        : stats("accel")
        , accel("accel", config, stats)
        , memory("memory", Bandwidth::fromBytesPerSecond(1e11), Time())
        , driver("driver", std::move(nodes))
    {
        driver.socket.bind(accel.target);
        accel.memory.bind(memory.socket);
    }

    double stat(const std::string& path) const { return test::statValue(stats, path); }

    StatGroup stats;
    Accelerator accel;
    FixedMemoryTarget memory;
    Driver driver;
};

constexpr std::uint64_t us = 1'000'000; // ps

} // namespace etsim::accel::testbench
