#pragma once
// Reads a DRAMSys simulation file (JSON: `simulation` with addressmapping, mcconfig, memspec,
// simconfig and tracesetup) and the files it names, and builds the equivalent HbmConfig and
// traffic. docs/hbm.md ("DRAMSys configurations") maps every key: each is either modelled
// (exactly, or with the difference stated there) or refused with the file, the key and what
// etsim supports. Nothing is ignored silently.
//
// The parts may be given inline (an object) or as a path relative to the simulation file, as
// DRAMSys accepts them.

#include "models/hbm/HbmConfig.h"
#include "models/hbm/MemTraffic.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>

namespace etsim::hbm {

/// One `tracesetup` entry.
struct DramsysInitiator {
    enum class Kind { Generator, Player };
    Kind kind = Kind::Generator;
    /// The generator's name, or the player's trace file (resolved against the simulation
    /// file's folder).
    std::string name;
    /// Requests (generator) or trace cycles (player) per second.
    Frequency clock = Frequency::fromHz(1e9);
    std::uint64_t dataLength = 64;
    /// Outstanding requests at most; 0: no limit.
    std::uint32_t maxPending = 0;
    // Generator only.
    bool random = false;
    std::uint64_t numRequests = 0;
    double rwRatio = 1.0;
    std::uint64_t seed = 0;
    std::uint64_t addressIncrement = 0; ///< sequential; 0: dataLength
    std::optional<std::uint64_t> minAddress;
    std::optional<std::uint64_t> maxAddress;
    std::uint64_t dataAlignment = 0; ///< random; 0: dataLength
};

struct DramsysSimulation {
    std::string simulationId;
    HbmConfig config;
    /// The tracesetup's initiator; absent when the file has no tracesetup.
    std::optional<DramsysInitiator> initiator;
};

/// Throws etsim::Error "<file>: <key>: <problem>; <what etsim supports>" for a key or value
/// that etsim does not model. `needTraffic`: the tracesetup must be there (etsim mem);
/// otherwise it may be absent (a platform's memory, whose traffic is the workload).
DramsysSimulation loadDramsysSimulation(const std::string& path, bool needTraffic = true);

/// DRAMSys's sequential and random generators: request i may issue at i / clock; the read or
/// write choice and the random addresses are drawn from the standard library's default engine
/// and distributions in DRAMSys's order (address, then direction), so a run of the same
/// compiler's standard library draws the same requests.
class DramsysGenerator {
public:
    /// `capacity` is the memory size in bytes. Throws etsim::Error for an address range
    /// outside it.
    DramsysGenerator(const DramsysInitiator& initiator, std::uint64_t capacity);
    bool next(MemRequest& request);

private:
    DramsysInitiator spec;
    std::uint64_t minAddress;
    std::uint64_t maxAddress;
    std::uint64_t increment;
    std::uint64_t alignment;
    std::uint64_t generated = 0;
    std::default_random_engine engine;
    std::uniform_real_distribution<double> direction{0.0, 1.0};
    std::uniform_int_distribution<std::uint64_t> address;
};

} // namespace etsim::hbm
