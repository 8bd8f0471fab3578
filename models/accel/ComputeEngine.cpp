#include "models/accel/ComputeEngine.h"

#include "kernel/ScTime.h"
#include "kernel/WallProfile.h"
#include "models/accel/ComputeSlice.h"

#include <algorithm>

namespace etsim::accel {

namespace {

double ratio(double value, double over)
{
    return over > 0.0 ? value / over : 0.0;
}

} // namespace

ComputeEngine::ComputeEngine(sc_core::sc_module_name name,
                             const AccelConfig& config,
                             StatGroup& stats)
    : sc_module(name)
    , target("target")
    , config(config)
    , shared(config.tensorVector == UnitSharing::Shared)
    , unitTimings(makeUnitTimings(config))
    , units(config.computeUnits)
    , tensorFreeAt(config.computeUnits)
    , vectorFreeAt(config.computeUnits)
    , roofline(stats.addCounter("nodes_roofline", "", "compute nodes timed by the roofline"))
    , gpuTiles(stats.addCounter("nodes_gpu_tiles", "", "GEMMs timed by tiles and waves"))
    , systolic(stats.addCounter("nodes_systolic", "", "GEMMs timed by the systolic model"))
    , vector(stats.addCounter("nodes_vector", "", "nodes run on the vector unit"))
    , fallbacks(stats.addCounter(
          "fallbacks", "", "tensor nodes a shape-based model left to the roofline"))
    , memoryBound(stats.addCounter("memory_bound", "", "nodes whose on-chip bytes set the time"))
    , flops(stats.addScalar("flops", "FLOP", "operations executed"))
    , tensorBusy(stats.addScalar("tensor_busy", "s", "busy time of all tensor units"))
    , vectorBusy(stats.addScalar("vector_busy", "s", "busy time of all vector units"))
{
    wall = stats.wallProfile();
    const double unitCount = config.computeUnits;
    const double peak = config.tensor.peak.get(config.defaultDataType).flopsPerSecond();
    stats.addFormula("achieved_flops", "FLOP/s", "FLOPs over the window", [this](auto window) {
        return ratio(flops.value(), window.seconds());
    });
    stats.addFormula(
        "flops_utilisation",
        "",
        "achieved FLOP/s over the tensor peak of the default data type",
        [this, peak](auto window) { return ratio(flops.value(), window.seconds() * peak); });
    stats.addFormula(
        "tensor_utilisation", "", "busy share of the tensor units", [this, unitCount](auto window) {
            return ratio(tensorBusy.value(), window.seconds() * unitCount);
        });
    stats.addFormula(
        "vector_utilisation", "", "busy share of the vector units", [this, unitCount](auto window) {
            return ratio(vectorBusy.value(), window.seconds() * unitCount);
        });
    for (std::uint32_t u = 0; u < config.computeUnits; ++u) {
        StatGroup& group = stats.addGroup("unit" + std::to_string(u));
        units[u].tensorBusy = &group.addScalar("tensor_busy", "s", "busy time of the tensor unit");
        units[u].vectorBusy = &group.addScalar("vector_busy", "s", "busy time of the vector unit");
    }

    target.register_nb_transport_fw(this, &ComputeEngine::nbTransportFw);
    target.register_b_transport(this, &ComputeEngine::bTransport);
    SC_METHOD(respond);
    sensitive << done.event();
    dont_initialize();
}

void ComputeEngine::attachTimeline(Timeline& timeline, std::uint32_t processId)
{
    this->timeline = &timeline;
    timelineProcess = processId;
    for (std::uint32_t u = 0; u < config.computeUnits; ++u) {
        std::string prefix = std::string(name()) + ".unit" + std::to_string(u);
        timeline.threadName(processId, 2 * u, prefix + ".tensor", 2 * u);
        timeline.threadName(processId, 2 * u + 1, prefix + ".vector", 2 * u + 1);
    }
}

Time ComputeEngine::reserve(const tlm::tlm_generic_payload& payload, Time arrival)
{
    const EtNodeExtension* extension = EtNodeExtension::find(payload);
    if (extension == nullptr)
        throw Error(std::string(name()) + ": compute transaction without an EtNodeExtension");
    const EtNodeInfo& node = extension->info;
    if (node.kind != NodeKind::Compute)
        throw Error(std::string(name()) + ": " + toString(node.node) + " of " +
                    toString(node.rank) + " is a " + toString(node.kind) +
                    " node; the compute engine runs compute nodes only");
    std::uint64_t sliceIndex = 0;
    std::uint64_t sliceCount = 1;
    if (const auto* slice = payload.get_extension<ComputeSliceExtension>()) {
        sliceIndex = slice->index;
        sliceCount = std::max<std::uint64_t>(slice->count, 1);
    }
    return reserveSlice(node, estimate(node), sliceIndex, sliceCount, arrival);
}

ComputeEstimate ComputeEngine::estimate(const EtNodeInfo& node) const
{
    return usesTensorUnit(node) ? unitTimings.estimateTensor(node)
                                : unitTimings.vector.estimate(node);
}

Time ComputeEngine::reserveSlice(const EtNodeInfo& node,
                                 const ComputeEstimate& whole,
                                 std::uint64_t sliceIndex,
                                 std::uint64_t sliceCount,
                                 Time arrival)
{
    return reserveSliceLasting(node,
                               whole,
                               usesTensorUnit(node),
                               sliceIndex,
                               sliceCount,
                               arrival,
                               Time::fromPs(sliceShare(whole.time.ps(), sliceIndex, sliceCount)));
}

Time ComputeEngine::reserveSliceLasting(const EtNodeInfo& node,
                                        const ComputeEstimate& whole,
                                        bool tensor,
                                        std::uint64_t sliceIndex,
                                        std::uint64_t sliceCount,
                                        Time arrival,
                                        Time duration)
{
    const Placement placement = place(freeFor(tensor), arrival, duration);
    const std::size_t chosen = placement.unit;
    Unit& unit = units[chosen];
    const Time start = placement.start;

    if (sliceIndex == 0)
        countNode(whole);
    countBusy(tensor, unit, duration.ps());
    if (timeline != nullptr)
        timeline->complete(timelineProcess,
                           static_cast<std::uint32_t>(2 * chosen + (tensor ? 0 : 1)),
                           toString(node.node),
                           toString(whole.fidelity),
                           start.ps(),
                           duration.ps(),
                           {{"flops", whole.flops / static_cast<double>(sliceCount)},
                            {"slice", sliceIndex},
                            {"slices", sliceCount},
                            {"fallback", whole.fallback}});
    return placement.end;
}

void ComputeEngine::reserveWholeNode(const ComputeEstimate& whole, bool tensor, Time end)
{
    if (!reservesWholeNodes())
        throw Error(std::string(name()) +
                    ": internal: a whole node's reservation needs one unit and no timeline");
    countNode(whole);
    freeFor(tensor)[0] = end;
    countBusy(tensor, units[0], whole.time.ps());
}

void ComputeEngine::countNode(const ComputeEstimate& whole)
{
    switch (whole.fidelity) {
    case Fidelity::Roofline:
        ++roofline;
        break;
    case Fidelity::GpuTiles:
        ++gpuTiles;
        break;
    case Fidelity::Systolic:
        ++systolic;
        break;
    case Fidelity::Vector:
        ++vector;
        break;
    }
    if (whole.fallback)
        ++fallbacks;
    if (whole.memoryBound)
        ++memoryBound;
    // A node's operations count once, when it starts, so the total does not depend on how its
    // slices are grouped.
    flops += whole.flops;
}

void ComputeEngine::countBusy(bool tensor, Unit& unit, std::uint64_t ps)
{
    (tensor ? tensorBusy : vectorBusy).addPicoseconds(ps);
    (tensor ? unit.tensorBusy : unit.vectorBusy)->addPicoseconds(ps);
}

void ComputeEngine::adopt(tlm::tlm_generic_payload& payload, Time end)
{
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    held.hold(payload);
    ++pending;
    done.put(&payload, toScTime(end) - sc_core::sc_time_stamp());
}

void ComputeEngine::fail(tlm::tlm_generic_payload& payload, const std::string& problem)
{
    payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    SC_REPORT_ERROR(reportType, (problem + " at " + sc_core::sc_time_stamp().to_string()).c_str());
}

tlm::tlm_sync_enum ComputeEngine::nbTransportFw(tlm::tlm_generic_payload& payload,
                                                tlm::tlm_phase& phase,
                                                sc_core::sc_time& delay)
{
    WallScope wallScope(wall, WallPart::Accelerator);
    if (phase == tlm::END_RESP)
        return tlm::TLM_COMPLETED;
    if (phase != tlm::BEGIN_REQ) {
        fail(payload, std::string(name()) + ": unexpected phase on the forward path");
        return tlm::TLM_COMPLETED;
    }
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    // Accepted either way; a node the engine cannot run is answered at once with an error
    // status on the backward path, like any other completion. The error is reported before the
    // reference is taken: if the report throws (the default for SC_ERROR), the run stops with
    // nothing held here and the initiator keeps its payload.
    sc_core::sc_time after = sc_core::SC_ZERO_TIME;
    try {
        Time end = reserve(payload, fromScTime(now + delay));
        payload.set_response_status(tlm::TLM_OK_RESPONSE);
        after = toScTime(end) - now;
    } catch (const Error& error) {
        fail(payload, error.what());
    }
    held.hold(payload);
    ++pending;
    done.put(&payload, after);
    phase = tlm::END_REQ;
    delay = sc_core::SC_ZERO_TIME;
    return tlm::TLM_UPDATED;
}

void ComputeEngine::bTransport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay)
{
    // The completion time is fixed at arrival, so the call returns at once with the delay.
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    try {
        Time end = reserve(payload, fromScTime(now + delay));
        delay = toScTime(end) - now;
        payload.set_response_status(tlm::TLM_OK_RESPONSE);
    } catch (const Error& error) {
        fail(payload, error.what());
    }
}

void ComputeEngine::respond()
{
    WallScope wallScope(wall, WallPart::Accelerator);
    while (std::optional<tlm::tlm_generic_payload*> next = done.next()) {
        tlm::tlm_generic_payload* payload = *next;
        --pending;
        tlm::tlm_phase phase = tlm::BEGIN_RESP;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        target->nb_transport_bw(*payload, phase, delay);
        held.release(*payload);
    }
}

} // namespace etsim::accel
