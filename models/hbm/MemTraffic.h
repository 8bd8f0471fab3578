#pragma once
// Traffic for driving a memory model alone (`etsim mem`): a synthetic generator (sequential,
// strided or random addresses, a read/write mix, a request size, an issue rate) and a reader of
// request traces in the STL text formats DRAMSys reads, plus the run that feeds either to the
// HBM model (both fidelities, plain C++, no SystemC) and reports bandwidth, the latency
// distribution and row-buffer statistics.
//
// STL, one request per line (docs/hbm.md, "etsim mem"):
//
//     # comment; blank lines are ignored
//     <cycle>: [(<length>)] read|write <hex address> [<hex data>]
//
// e.g. `31: read 0x400140` or `40: (128) write 1f00 00ff00ff`. Cycles count periods of a
// given clock; in STL they are absolute (and must not decrease), in relative STL each is the
// distance from the previous request. `length` is in bytes (default: the run's request size).
// Data is checked for hex digits and otherwise ignored: the model is timing only.
//
// Latency, as everywhere in the HBM model: from the request's arrival at the controller (its
// issue) to its last data beat.

#include "kernel/Config.h"
#include "kernel/Units.h"
#include "models/hbm/HbmConfig.h"
#include "models/hbm/PcTiming.h"

#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace etsim::hbm {

/// One request: not issued before `notBeforePs` (ps), `bytes` from `address`.
struct MemRequest {
    std::uint64_t notBeforePs = 0;
    std::uint64_t address = 0;
    std::uint64_t bytes = 0;
    bool write = false;
};

/// Fills `request` and returns true, or returns false when the traffic has ended.
using RequestSource = std::function<bool(MemRequest& request)>;

/// Copy: a copy kernel's traffic. The range's first half is the source, its second half the
/// destination; requests alternate between `burst` reads of consecutive source blocks and
/// `burst` writes of the same blocks to the destination (read blocks k..k+burst-1, then write
/// them), as a GPU's write-back caches drain a copy's stores in long bursts.
enum class AddressPattern { Sequential, Strided, Random, Copy };
constexpr EnumName<AddressPattern> addressPatternNames[] = {
    {"sequential", AddressPattern::Sequential},
    {"strided", AddressPattern::Strided},
    {"random", AddressPattern::Random},
    {"copy", AddressPattern::Copy},
};

/// A synthetic traffic pattern.
struct TrafficSpec {
    AddressPattern pattern = AddressPattern::Sequential;
    /// Bytes per request.
    Size requestSize = Size::fromBytes(64);
    /// Requests to generate.
    std::uint64_t count = 10000;
    /// Fraction of the requests that write, in [0, 1]; writes are spread evenly (request i
    /// writes when floor((i + 1)·f) > floor(i·f)). Must stay 0 for the copy pattern, whose
    /// bursts fix the mix at one write per read.
    double writeFraction = 0.0;
    /// Copy: requests per read burst and per write burst, ≥ 1 (1 alternates read and write).
    std::uint64_t burst = 64;
    /// Strided: distance between consecutive requests (sequential uses the request size).
    Size stride = Size::fromBytes(4096);
    /// First address of the region the requests cover.
    std::uint64_t base = 0;
    /// Bytes the region covers; addresses wrap inside it. 0: the memory's capacity.
    Size range = Size::fromBytes(0);
    /// Offered load: request i arrives at i × size / rate. 0 B/s: all arrive at time 0 (the
    /// outstanding limit then paces them: a closed loop).
    Bandwidth rate = Bandwidth::fromBytesPerSecond(0.0);
    /// Random: seed of the address sequence.
    std::uint64_t seed = 1;
};

/// Throws etsim::Error naming the field for a spec that cannot generate traffic.
void checkTrafficSpec(const TrafficSpec& spec);

/// Generates the requests of a TrafficSpec in order.
class TrafficGenerator {
public:
    /// `capacityBytes` is the range used when the spec's range is 0. Throws etsim::Error for a
    /// bad spec (checkTrafficSpec) or a range smaller than one request.
    TrafficGenerator(const TrafficSpec& spec, std::uint64_t capacityBytes);

    bool next(MemRequest& request);

private:
    TrafficSpec spec;
    std::uint64_t range;
    std::uint64_t issued = 0;
    std::uint64_t state;
};

enum class StlTiming { Absolute, Relative };

/// Reads STL or relative-STL requests from a stream, one per call.
class StlReader {
public:
    /// `name` names the source in errors; `clock` converts cycles to time; `defaultBytes` is
    /// the size of a request without a length. `in` must outlive the reader.
    StlReader(std::istream& in,
              std::string name,
              StlTiming timing,
              Frequency clock,
              std::uint64_t defaultBytes);

    /// Throws etsim::Error "<name>:<line>: <problem>; <how to fix>" for a malformed line.
    bool next(MemRequest& request);

private:
    [[noreturn]] void fail(const std::string& problem) const;

    std::istream& in;
    std::string name;
    StlTiming timing;
    Frequency clock;
    std::uint64_t defaultBytes;
    std::uint64_t line = 0;
    std::uint64_t lastCycle = 0;
    std::string text;
};

/// Latency distribution of a run, ns.
struct LatencySummary {
    std::uint64_t count = 0;
    double minNs = 0.0;
    double meanNs = 0.0;
    double p50Ns = 0.0;
    double p90Ns = 0.0;
    double p99Ns = 0.0;
    double maxNs = 0.0;
    /// Upper bucket edges, ns; the last bucket (count in `buckets.back()`) is unbounded.
    std::vector<double> edgesNs;
    std::vector<std::uint64_t> buckets;
};

/// Row-buffer statistics summed over the pseudo-channels (detailed fidelity only).
struct RowBufferSummary {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;    ///< accesses to an idle bank
    std::uint64_t conflicts = 0; ///< accesses to a bank holding another row
    std::uint64_t activates = 0;
    std::uint64_t refreshes = 0;
    std::uint64_t readWriteSwitches = 0;
    /// hits / (hits + misses + conflicts); 0 without accesses.
    double hitRate() const;
};

struct MemoryRunOptions {
    /// Requests in flight at most; 0 = no limit (open loop).
    std::uint32_t outstanding = 16;
    /// Detailed fidelity: called for every command issued (PC over the device, cycle, command,
    /// bank within the PC, row), in issue order per PC.
    std::function<void(std::uint32_t pc,
                       std::uint64_t cycle,
                       Command command,
                       std::uint32_t bank,
                       std::uint32_t row)>
        commands;
};

struct MemoryRunReport {
    std::string preset;
    Fidelity fidelity = Fidelity::Detailed;
    /// Peak data rate of the device, B/s.
    double peakBytesPerSecond = 0.0;
    std::uint64_t reads = 0;
    std::uint64_t writes = 0;
    std::uint64_t bytesRead = 0;
    std::uint64_t bytesWritten = 0;
    /// First issue and last data beat, ps.
    std::uint64_t firstIssuePs = 0;
    std::uint64_t lastDonePs = 0;
    LatencySummary latency;
    /// Absent with the analytic fidelity, which has no rows.
    std::optional<RowBufferSummary> rowBuffer;

    std::uint64_t requests() const { return reads + writes; }
    /// Bytes requested over [first issue, last data beat], B/s.
    double bandwidth() const;
    double peakFraction() const;
};

/// Runs `source` through the model `config` selects (validated here) until every request has
/// completed. Requests are issued in order, each at max(its notBeforePs, a free slot under the
/// outstanding limit). Throws etsim::Error for an invalid config.
MemoryRunReport
runMemory(const HbmConfig& config, const RequestSource& source, const MemoryRunOptions& options);

} // namespace etsim::hbm
