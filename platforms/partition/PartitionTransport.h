#pragma once
// How the processes of a partitioned run reach each other (docs/partitioned-runs.md). The run
// (PartitionedJob) sees only this interface; MpiTransport implements it over MPI.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace etsim::platform {

/// A peer died, stalled past the timeout or sent garbage: the run cannot go on.
class PartitionFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class PartitionTransport {
public:
    virtual ~PartitionTransport() = default;
    /// This process's partition and the number of partitions.
    virtual std::uint32_t self() const = 0;
    virtual std::uint32_t partitions() const = 0;
    /// Sends `outgoing[q]` to every other partition q and returns what each sent this
    /// round (index = partition; self's entry empty). `nowPs` names the simulated time in the
    /// error. Throws PartitionFailure naming the partition that did not answer in time.
    virtual std::vector<std::vector<std::uint8_t>>
    exchange(const std::vector<std::vector<std::uint8_t>>& outgoing, std::uint64_t nowPs) = 0;
    /// Every partition's `share`, at partition 0 (index = partition); the others send theirs
    /// and get an empty list. Throws PartitionFailure as exchange() does.
    virtual std::vector<std::vector<std::uint8_t>> gather(const std::vector<std::uint8_t>& share,
                                                          std::uint64_t nowPs) = 0;
    /// Ends every process of the run at once (after a failure), with exit code `code`.
    [[noreturn]] virtual void abortAll(int code) = 0;
};

} // namespace etsim::platform
