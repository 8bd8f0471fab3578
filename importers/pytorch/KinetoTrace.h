#pragma once
// A Kineto device trace (torch.profiler's Chrome-format JSON): the host operators and CUDA
// runtime calls each thread made and the GPU work (kernels, copies, sets) each stream ran, with
// measured times. Only complete events ("ph": "X") matter; flows, counters and metadata rows
// are skipped.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace etsim::importers::pytorch {

struct KinetoEvent {
    std::string name;
    int64_t pid = 0;
    int64_t tid = 0;
    // Nanoseconds on the trace's clock (Kineto writes microseconds, possibly fractional).
    int64_t startNs = 0;
    int64_t durationNs = 0;
    // "External id", "correlation", "stream", "Record function id"; -1 when absent.
    int64_t externalId = -1;
    int64_t correlation = -1;
    int64_t stream = -1;
    int64_t rfId = -1;

    int64_t endNs() const { return startNs + durationNs; }
};

struct KinetoTrace {
    std::string file;
    // distributedInfo.rank / world_size; -1 when absent.
    int64_t rank = -1;
    int64_t worldSize = -1;
    std::string backend;
    // The host process: the pid of the host-operator events.
    int64_t pid = -1;
    // cpu_op and user_annotation events, ProfilerStep#N left out.
    std::vector<KinetoEvent> ops;
    // cuda_runtime (and cuda_driver) events: kernel launches, copies, synchronisations.
    std::vector<KinetoEvent> runtime;
    // kernel, gpu_memcpy and gpu_memset events.
    std::vector<KinetoEvent> gpu;
    // The ProfilerStep#N annotations: the iterations the trace covers.
    std::vector<KinetoEvent> steps;
};

// Reads a Kineto trace. Throws etsim::Error naming the file and the event for anything it
// cannot use (no traceEvents list, an X event without numeric ts/dur, ...).
KinetoTrace readKinetoTrace(const std::filesystem::path& file);
KinetoTrace parseKinetoTrace(const nlohmann::json& document, const std::string& file);

// Whether a runtime call blocks the host until GPU work is done.
bool isSynchronizingCall(const std::string& name);

} // namespace etsim::importers::pytorch
