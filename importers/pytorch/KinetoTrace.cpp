#include "importers/pytorch/KinetoTrace.h"

#include "importers/pytorch/JsonFile.h"
#include "kernel/Error.h"

#include <cmath>
#include <map>

namespace etsim::importers::pytorch {

namespace {

using nlohmann::json;

std::optional<int64_t> integerOf(const json& value)
{
    if (value.is_number_integer())
        return value.get<int64_t>();
    if (value.is_number_float())
        return static_cast<int64_t>(std::llround(value.get<double>()));
    return std::nullopt;
}

int64_t argument(const json& args, const char* key)
{
    if (!args.is_object())
        return -1;
    auto it = args.find(key);
    if (it == args.end())
        return -1;
    std::optional<int64_t> value = integerOf(*it);
    return value ? *value : -1;
}

} // namespace

bool isSynchronizingCall(const std::string& name)
{
    return name == "cudaDeviceSynchronize" || name == "cudaStreamSynchronize" ||
           name == "cudaEventSynchronize" || name == "cudaMemcpy" ||
           name == "hipDeviceSynchronize" || name == "hipStreamSynchronize" ||
           name == "hipEventSynchronize" || name == "hipMemcpy";
}

KinetoTrace parseKinetoTrace(const json& document, const std::string& file)
{
    if (!document.is_object() || !document.contains("traceEvents") ||
        !document["traceEvents"].is_array())
        throw Error(file + ": not a Kineto trace (no \"traceEvents\" list); a host execution "
                           "trace goes after --host");
    KinetoTrace trace;
    trace.file = file;
    auto info = document.find("distributedInfo");
    if (info != document.end() && info->is_object()) {
        trace.rank = argument(*info, "rank");
        trace.worldSize = argument(*info, "world_size");
        if (info->contains("backend") && (*info)["backend"].is_string())
            trace.backend = (*info)["backend"].get<std::string>();
    }
    std::map<int64_t, uint64_t> opPids;
    const json& events = document["traceEvents"];
    for (std::size_t i = 0; i < events.size(); ++i) {
        const json& e = events[i];
        if (!e.is_object())
            continue;
        auto ph = e.find("ph");
        if (ph == e.end() || !ph->is_string() || ph->get_ref<const std::string&>() != "X")
            continue;
        auto cat = e.find("cat");
        if (cat == e.end() || !cat->is_string())
            continue;
        const std::string& category = cat->get_ref<const std::string&>();
        bool isOp = category == "cpu_op" || category == "user_annotation";
        bool isRuntime = category == "cuda_runtime" || category == "cuda_driver";
        bool isGpu = category == "kernel" || category == "gpu_memcpy" || category == "gpu_memset";
        if (!isOp && !isRuntime && !isGpu)
            continue;
        auto where = [&](const std::string& problem) {
            return Error(file + ": traceEvents[" + std::to_string(i) + "] (" + category + "): " +
                         problem + "; the file is corrupt or not written by torch.profiler");
        };
        KinetoEvent event;
        if (e.contains("name") && e["name"].is_string())
            event.name = e["name"].get<std::string>();
        std::optional<double> ts;
        std::optional<double> dur;
        if (e.contains("ts") && e["ts"].is_number())
            ts = e["ts"].get<double>();
        if (e.contains("dur") && e["dur"].is_number())
            dur = e["dur"].get<double>();
        if (!ts || !dur || *dur < 0)
            throw where("\"ts\" and a non-negative \"dur\" must be numbers (microseconds)");
        event.startNs = static_cast<int64_t>(std::llround(*ts * 1000.0));
        event.durationNs = static_cast<int64_t>(std::llround(*dur * 1000.0));
        std::optional<int64_t> pid = e.contains("pid") ? integerOf(e["pid"]) : std::nullopt;
        std::optional<int64_t> tid = e.contains("tid") ? integerOf(e["tid"]) : std::nullopt;
        if (!pid || !tid) {
            if (isGpu)
                throw where("\"pid\" and \"tid\" must be numbers");
            continue; // a span row such as the profiler's own "Spans" track
        }
        event.pid = *pid;
        event.tid = *tid;
        const json& args = e.contains("args") ? e["args"] : json();
        event.externalId = argument(args, "External id");
        event.correlation = argument(args, "correlation");
        event.stream = argument(args, "stream");
        event.rfId = argument(args, "Record function id");
        if (isGpu && event.stream < 0)
            event.stream = event.tid;
        if (isOp && event.name.rfind("ProfilerStep#", 0) == 0) {
            trace.steps.push_back(std::move(event));
            continue;
        }
        if (isOp) {
            ++opPids[event.pid];
            trace.ops.push_back(std::move(event));
        } else if (isRuntime)
            trace.runtime.push_back(std::move(event));
        else
            trace.gpu.push_back(std::move(event));
    }
    uint64_t most = 0;
    for (const auto& [pid, count] : opPids)
        if (count > most) {
            most = count;
            trace.pid = pid;
        }
    return trace;
}

KinetoTrace readKinetoTrace(const std::filesystem::path& file)
{
    return parseKinetoTrace(readJsonFile(file), file.string());
}

} // namespace etsim::importers::pytorch
