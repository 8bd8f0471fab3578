#pragma once
// PartitionTransport over MPI (OpenMPI from Debian), built only when CMake found MPI
// (ETSIM_WITH_MPI). Every wait polls with a wall-clock deadline, so a peer that died or
// stalled ends the run with a PartitionFailure naming it instead of a hang.

#include "platforms/partition/PartitionTransport.h"

#include <chrono>

namespace etsim::platform {

class MpiTransport final : public PartitionTransport {
public:
    /// Initialises MPI (once per process). `timeout`: how long a partition may stay silent.
    explicit MpiTransport(std::chrono::milliseconds timeout);
    /// Finalises MPI.
    ~MpiTransport() override;
    MpiTransport(const MpiTransport&) = delete;
    MpiTransport& operator=(const MpiTransport&) = delete;

    std::uint32_t self() const override { return rank; }
    std::uint32_t partitions() const override { return size; }
    std::vector<std::vector<std::uint8_t>>
    exchange(const std::vector<std::vector<std::uint8_t>>& outgoing, std::uint64_t nowPs) override;
    std::vector<std::vector<std::uint8_t>> gather(const std::vector<std::uint8_t>& share,
                                                  std::uint64_t nowPs) override;
    [[noreturn]] void abortAll(int code) override;

private:
    // Receives one message with `tag` from `peer` by the deadline.
    std::vector<std::uint8_t> receive(std::uint32_t peer,
                                      int tag,
                                      std::chrono::steady_clock::time_point deadline,
                                      std::uint64_t nowPs,
                                      const char* what);
    std::uint32_t rank = 0;
    std::uint32_t size = 1;
    std::chrono::milliseconds timeout;
};

} // namespace etsim::platform
