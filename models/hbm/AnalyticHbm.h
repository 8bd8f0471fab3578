#pragma once
// The analytic fidelity as plain C++: one FIFO server per device that moves a transaction's
// bytes at the device peak × the preset's calibrated efficiency of its direction, then adds a
// fixed latency. A transaction of the other direction than the one before starts no earlier
// than the turnaround after the server frees:
//   start = max(arrival, server free + (direction changed ? turnaround : 0))
//   completion = start + bytes / (peak × efficiency[direction]) + latency.

#include "kernel/Stats.h"
#include "models/hbm/HbmConfig.h"

#include <algorithm>
#include <cstdint>

namespace etsim::hbm {

class AnalyticHbm {
public:
    /// What the server remembers between transactions.
    struct Server {
        /// The end of the last transaction's data transfer, ps.
        std::uint64_t freePs = 0;
        /// Its direction, and whether there was one.
        bool lastWrite = false;
        bool used = false;
    };

    /// `config` must be validated; stats go into `stats`.
    AnalyticHbm(const HbmConfig& config, StatGroup& stats);
    AnalyticHbm(const AnalyticHbm&) = delete;
    AnalyticHbm& operator=(const AnalyticHbm&) = delete;

    /// Accepts a transaction of `bytes` (a write when `write`) arriving at `arrivalPs` (ps) and
    /// returns its completion time, ps. Transactions are served in call order.
    std::uint64_t complete(std::uint64_t arrivalPs, std::uint64_t bytes, bool write);
    /// Records `times` transactions of `bytes`, each completing `latencyPs` after its arrival,
    /// as complete() would for each; with leaveAt(), the accelerator's streaming plan commits
    /// the chunks it has worked out with serve() at once.
    void recordCompleted(std::uint64_t bytes, std::uint64_t latencyPs, std::uint64_t times)
    {
        record(bytes, latencyPs, times);
    }
    /// Leaves the server in `after`, counting `turnaroundCount` changes of direction on the
    /// way: the state the transactions given to recordCompleted() left.
    void leaveAt(const Server& after, std::uint64_t turnaroundCount);

    /// The server's state now.
    const Server& server() const { return state; }
    /// When the server is next free, ps (the end of the last transaction's data transfer).
    std::uint64_t freeAt() const { return state.freePs; }
    /// The completion, ps, of a transaction arriving at `arrivalPs` at a server in `server`,
    /// which it advances; nothing is recorded. complete() is this on the server's own state
    /// plus the stats, so a caller that plans transactions ahead (the accelerator's streaming
    /// fast path) uses the model's own arithmetic.
    /// Inline: the accelerator's fast path serves one DMA chunk at a time.
    std::uint64_t
    serve(Server& server, std::uint64_t arrivalPs, std::uint64_t bytes, bool write) const
    {
        const bool turns = server.used && server.lastWrite != write;
        const std::uint64_t start = std::max(arrivalPs, server.freePs + (turns ? turnaroundPs : 0));
        server.freePs = start + transferPs(bytes, write);
        server.lastWrite = write;
        server.used = true;
        return server.freePs + latencyPs;
    }

    /// Whether `other` serves every transaction as this model does (its timing parameters).
    bool sameTiming(const AnalyticHbm& other) const
    {
        return readBytesPerPs == other.readBytesPerPs && writeBytesPerPs == other.writeBytesPerPs &&
               turnaroundPs == other.turnaroundPs && latencyPs == other.latencyPs;
    }

    /// `server` as seen by arrivals at or after `fromPs` (StreamMemory::settled): a server whose
    /// next transaction starts at its arrival whatever its direction is the unused server free
    /// at `fromPs`.
    Server settled(const Server& server, std::uint64_t fromPs) const
    {
        const std::uint64_t idleFrom = server.freePs + (server.used ? turnaroundPs : 0);
        if (idleFrom <= fromPs)
            return Server{fromPs, false, false};
        return server.used ? server : Server{server.freePs, false, false};
    }

private:
    /// The stats of `times` transactions of `bytes`, each `latencyPs` long.
    void record(std::uint64_t bytes, std::uint64_t latencyPs, std::uint64_t times);
    /// llround(bytes / rate of the direction), ps; the last answer per direction is kept, as
    /// a stream asks for the same chunk size over and over.
    std::uint64_t transferPs(std::uint64_t bytes, bool write) const
    {
        const LastTransfer& last = lastTransfer[write ? 1 : 0];
        return last.bytes == bytes ? last.ps : newTransferPs(bytes, write);
    }
    // transferPs() of a size other than the last of its direction; remembers it.
    std::uint64_t newTransferPs(std::uint64_t bytes, bool write) const;

    double readBytesPerPs;
    double writeBytesPerPs;
    struct LastTransfer {
        std::uint64_t bytes = 0;
        std::uint64_t ps = 0;
    };
    mutable LastTransfer lastTransfer[2];
    std::uint64_t turnaroundPs;
    std::uint64_t latencyPs;
    Server state;
    Counter& transactions;
    Counter& bytesMoved;
    Counter& turnarounds;
    Distribution& latency;
};

} // namespace etsim::hbm
