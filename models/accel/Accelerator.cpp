#include "models/accel/Accelerator.h"

#include "kernel/Error.h"
#include "kernel/IntMath.h"
#include "kernel/ScTime.h"
#include "kernel/Units.h"
#include "kernel/WallProfile.h"
#include "models/accel/ComputeSlice.h"

#include <algorithm>

namespace etsim::accel {

Accelerator::Accelerator(sc_core::sc_module_name name,
                         const AccelConfig& config,
                         StatGroup& stats,
                         EngineBinding binding)
    : sc_module(name)
    , target("target")
    , engineSocket("engineSocket")
    , memory("memory")
    , config(config)
    , hbm(config.memory)
    , onChip(config.sram.policy == SramPolicy::Legacy
                 ? nullptr
                 : std::make_unique<OnChipMemory>(config.sram.capacity.bytes(),
                                                  makeReplacementPolicy(config.sram.policy),
                                                  stats.addGroup("sram")))
    , pool(std::string(this->name()) + ".pool")
    , computeNodes(stats.addCounter("compute_nodes", "", "compute nodes completed"))
    , memoryNodes(stats.addCounter("memory_nodes", "", "load and store nodes completed"))
    , streamedNodes(stats.addCounter(
          "streamed_nodes", "", "compute nodes that moved bytes between HBM and the chip"))
    , streamedBytes(stats.addCounter(
          "streamed_bytes", "B", "bytes compute nodes moved between HBM and the chip"))
    , readBytes(stats.addCounter("dma_read_bytes", "B", "bytes the DMA read from HBM"))
    , writeBytes(stats.addCounter("dma_write_bytes", "B", "bytes the DMA wrote to HBM"))
    , transfers(stats.addCounter("dma_transfers", "", "DMA transactions to HBM"))
{
    wall = stats.wallProfile();
    stats.addFormula(
        "dma_bandwidth", "B/s", "bytes the DMA moved over the window", [this](auto window) {
            double seconds = window.seconds();
            return seconds > 0.0
                       ? static_cast<double>(readBytes.value() + writeBytes.value()) / seconds
                       : 0.0;
        });
    target.register_nb_transport_fw(this, &Accelerator::targetFw);
    target.register_b_transport(this, &Accelerator::targetB);
    engineSocket.register_nb_transport_bw(this, &Accelerator::engineBw);
    memory.register_nb_transport_bw(this, &Accelerator::memoryBw);
    if (binding == EngineBinding::Internal) {
        ownEngine = std::make_unique<ComputeEngine>("engine", config, stats.addGroup("compute"));
        engineSocket.bind(ownEngine->target);
    }

    SC_METHOD(onArrival);
    sensitive << arrivals.event();
    dont_initialize();
    SC_METHOD(onSubDone);
    sensitive << subDone.event();
    dont_initialize();
    SC_METHOD(onReplayed);
    sensitive << replayed.event();
    dont_initialize();
    SC_METHOD(pump);
    sensitive << pumpEvent;
    dont_initialize();
    SC_METHOD(onFastDone);
    sensitive << fastEvent;
    dont_initialize();
    SC_METHOD(onFastFinish);
    sensitive << fastFinishEvent;
    dont_initialize();
}

Accelerator::~Accelerator()
{
    // Empty unless a run was abandoned mid-transaction. The engine goes first, giving back its
    // references on sub-transactions while `pool` still exists.
    ownEngine.reset();
    for (auto& entry : subTasks)
        entry.first->release();
    subTasks.clear();
}

void Accelerator::report(const std::string& problem)
{
    SC_REPORT_ERROR(
        reportType,
        (std::string(name()) + ": " + problem + " at " + sc_core::sc_time_stamp().to_string())
            .c_str());
}

tlm::tlm_sync_enum Accelerator::targetFw(int socketId,
                                         tlm::tlm_generic_payload& payload,
                                         tlm::tlm_phase& phase,
                                         sc_core::sc_time& delay)
{
    WallScope wallScope(wall, WallPart::Accelerator);
    if (phase == tlm::END_RESP)
        return tlm::TLM_COMPLETED;
    if (phase != tlm::BEGIN_REQ) {
        payload.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        report("unexpected phase on the forward path");
        return tlm::TLM_COMPLETED;
    }
    requests.hold(payload);
    arrivals.put(Arrival{&payload, socketId}, delay);
    phase = tlm::END_REQ;
    delay = sc_core::SC_ZERO_TIME;
    return tlm::TLM_UPDATED;
}

void Accelerator::targetB(int socketId, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay)
{
    // Runs in the caller's thread: catch up with its local time, then wait for completion.
    if (delay != sc_core::SC_ZERO_TIME) {
        wait(delay);
        delay = sc_core::SC_ZERO_TIME;
    }
    sc_core::sc_event finished;
    start(payload, &finished, socketId);
    // A node that moves nothing completes inside start().
    if (payload.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE)
        wait(finished);
}

void Accelerator::onArrival()
{
    WallScope wallScope(wall, WallPart::Accelerator);
    while (std::optional<Arrival> arrival = arrivals.next())
        start(*arrival->payload, nullptr, arrival->socket);
}

std::uint64_t Accelerator::regionFor(const EtNodeInfo& info, std::uint64_t bytes)
{
    if (const NodeAttribute::Value* id = info.findAttribute(tensorIdAttribute))
        if (const auto* number = std::get_if<std::int64_t>(id))
            return hbm.tensor(static_cast<std::uint64_t>(*number), bytes);
    return hbm.fresh(bytes);
}

namespace {

// The bytes a node's named tensors occupy, saturating (a corrupt trace may name huge ones): each
// tensor id once, at the largest size the node names it with (a tensor read and written in
// place, as an optimizer updates its state, takes its memory once though the node moves it
// twice).
std::uint64_t footprintBytes(const EtNodeInfo& info)
{
    if (!info.tensors)
        return 0;
    const std::vector<TensorUse>& inputs = info.tensors->inputs;
    const std::vector<TensorUse>& outputs = info.tensors->outputs;
    const std::size_t count = inputs.size() + outputs.size();
    auto at = [&](std::size_t i) -> const TensorUse& {
        return i < inputs.size() ? inputs[i] : outputs[i - inputs.size()];
    };
    std::uint64_t total = 0;
    // Nodes name a handful of tensors: a quadratic pass costs less than any set.
    for (std::size_t i = 0; i < count; ++i) {
        const TensorUse& tensor = at(i);
        bool counted = false;
        std::uint64_t largest = tensor.bytes;
        for (std::size_t j = 0; j < count && !counted; ++j) {
            if (j == i || at(j).id != tensor.id)
                continue;
            counted = j < i;
            largest = std::max(largest, at(j).bytes);
        }
        if (!counted)
            total = largest > ~std::uint64_t{0} - total ? ~std::uint64_t{0} : total + largest;
    }
    return total;
}

} // namespace

void Accelerator::start(tlm::tlm_generic_payload& request,
                        sc_core::sc_event* finished,
                        int socketId)
{
    request.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    const std::uint64_t id = jobs.add(Job{});
    Job& job = jobs.at(id);
    job.request = &request;
    job.finished = finished;
    job.socketId = socketId;
    const EtNodeExtension* extension = EtNodeExtension::find(request);
    if (extension == nullptr) {
        job.failed = true;
        finish(id);
        report("transaction without an EtNodeExtension");
        return;
    }
    job.info = &extension->info;
    if (job.info->durationPs != 0) {
        // Checked: SystemC adds the delay to its clock without a check, and a sum past 2^64
        // ps would wrap to a time in the past (the node then took no time at all).
        try {
            (void)(fromScTime(sc_core::sc_time_stamp()) + Time::fromPs(job.info->durationPs));
        } catch (const UnitError& error) {
            job.failed = true;
            report(toString(job.info->node) + " of " + toString(job.info->rank) +
                   " would end past the end of the simulated clock (2^64 ps, about 213 days): " +
                   error.what() + "; check its duration_micros");
            finish(id);
            return;
        }
        replayed.put(id, toScTime(Time::fromPs(job.info->durationPs)));
        return;
    }
    const std::uint64_t chunk = config.dma.chunk.bytes();
    // A node's tensors must fit the memory, and it reads and writes each byte it holds at most
    // once (an in-place update moves twice what it holds): the DMA work (chunks, and HBM
    // bursts behind them) grows with the bytes, and a corrupt tensor_size would otherwise keep
    // the model busy for years.
    const bool moves = job.info->kind == NodeKind::MemLoad ||
                       job.info->kind == NodeKind::MemStore || job.info->kind == NodeKind::Compute;
    const std::uint64_t capacity = hbm.capacity();
    const std::uint64_t footprint = footprintBytes(*job.info);
    const bool overMoved = job.info->bytes / 2 + job.info->bytes % 2 > capacity; // > 2 x, exactly
    if (moves && (overMoved || footprint > capacity)) {
        job.failed = true;
        const std::string what = toString(job.info->node) + " of " + toString(job.info->rank);
        // Reported before the error response, which the driver would report first, without
        // the reason.
        report(what +
               (overMoved ? " moves " + std::to_string(job.info->bytes) +
                                " B (tensor_size), more than twice the "
                          : "'s inputs and outputs hold " + std::to_string(footprint) +
                                " B (each tensor id once), more than the ") +
               std::to_string(capacity) +
               " B the accelerator's memory holds; a node's tensors must fit its memory and "
               "it reads and writes each byte at most once, so fix the size or split the node");
        finish(id);
        return;
    }
    switch (job.info->kind) {
    case NodeKind::Compute: {
        if (fastState == FastState::Running)
            leaveFastPath();
        job.streams = true;
        ++streaming;
        stageCompute(job);
        job.chunks = streamChunks(job.readBytes, job.writeBytes, chunk);
        if (job.chunks > 0) {
            if (job.readBytes > 0)
                job.readRegion = regionFor(*job.info, job.readBytes);
            if (job.writeBytes > 0)
                job.writeRegion = hbm.fresh(job.writeBytes);
            ++streamedNodes;
            streamedBytes += job.readBytes + job.writeBytes;
        }
        if (fastEligible())
            planFast(id, job);
        else
            advance(id);
        break;
    }
    case NodeKind::MemLoad:
    case NodeKind::MemStore: {
        stageMemory(job);
        job.chunks = streamChunks(job.readBytes, job.writeBytes, chunk);
        if (job.chunks == 0) {
            finish(id);
            return;
        }
        if (fastState == FastState::Running)
            leaveFastPath();
        job.streams = true;
        ++streaming;
        // The node's own bytes go to its tensor's region; a load's write-backs to a fresh one.
        if (job.info->kind == NodeKind::MemLoad) {
            job.readRegion = regionFor(*job.info, job.readBytes);
            if (job.writeBytes > 0)
                job.writeRegion = hbm.fresh(job.writeBytes);
        } else {
            job.writeRegion = regionFor(*job.info, job.writeBytes);
        }
        if (fastEligible()) {
            planFast(id, job);
            break;
        }
        for (std::uint64_t i = 0; i < job.chunks; ++i)
            queueLoad(id, job, i);
        job.loadsIssued = job.chunks;
        pumpEvent.notify(sc_core::SC_ZERO_TIME);
        break;
    }
    default: {
        job.failed = true;
        const std::string kind = toString(job.info->kind);
        const std::string what = toString(job.info->node) + " of " + toString(job.info->rank);
        finish(id);
        report(what + " is a " + kind +
               " node; the accelerator runs compute, load and store nodes only");
        return;
    }
    }
}

void Accelerator::stageCompute(Job& job)
{
    const std::uint64_t bytes = job.info->bytes;
    if (!onChip) {
        // legacy: the first sram.capacity bytes of the node count as resident.
        const std::uint64_t capacity = config.sram.capacity.bytes();
        job.readBytes = bytes > capacity ? bytes - capacity : 0;
        return;
    }
    if (!job.info->tensors) {
        // Nothing says which bytes an earlier node left on chip: all of them come from HBM.
        onChip->untracked(bytes);
        job.readBytes = bytes;
        return;
    }
    const ResidencyTraffic traffic = onChip->compute(*job.info->tensors);
    job.readBytes = traffic.readBytes;
    job.writeBytes = traffic.writeBytes;
}

void Accelerator::stageMemory(Job& job)
{
    const bool load = job.info->kind == NodeKind::MemLoad;
    (load ? job.readBytes : job.writeBytes) = job.info->bytes;
    if (!onChip || !job.info->tensors || job.info->bytes == 0)
        return;
    if (load)
        job.writeBytes = onChip->load(*job.info->tensors).writeBytes;
    else
        onChip->store(*job.info->tensors);
}

void Accelerator::queueLoad(std::uint64_t id, Job& job, std::uint64_t chunk)
{
    dmaOutbox.queue.push_back(&makeLoad(id, job, chunk));
}

tlm::tlm_generic_payload& Accelerator::makeLoad(std::uint64_t id, Job& job, std::uint64_t chunk)
{
    const StreamPiece piece =
        streamPiece(job.readBytes, job.writeBytes, config.dma.chunk.bytes(), chunk);
    const std::uint64_t bytes = piece.bytes;
    const tlm::tlm_command command = piece.write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND;
    tlm::tlm_generic_payload& payload = pool.acquire();
    payload.set_command(command);
    payload.set_address(hbm.address(piece.write ? job.writeRegion : job.readRegion, piece.offset));
    EtNodeInfo info;
    info.rank = job.info->rank;
    info.node = job.info->node;
    info.kind = command == tlm::TLM_READ_COMMAND ? NodeKind::MemLoad : NodeKind::MemStore;
    info.bytes = bytes;
    info.dataType = job.info->dataType;
    payload.set_extension(new EtNodeExtension(std::move(info)));
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    subTasks[&payload] = SubTask{id, false, sc_core::SC_ZERO_TIME};
    return payload;
}

void Accelerator::queueCompute(std::uint64_t id, Job& job)
{
    engineOutbox.queue.push_back(&makeCompute(id, job));
}

tlm::tlm_generic_payload& Accelerator::makeCompute(std::uint64_t id, Job& job)
{
    tlm::tlm_generic_payload& payload = pool.acquire();
    payload.set_command(tlm::TLM_READ_COMMAND);
    payload.set_address(0);
    payload.set_extension(new EtNodeExtension(*job.info));
    payload.set_extension(
        new ComputeSliceExtension(job.computesIssued, std::max<std::uint64_t>(job.chunks, 1)));
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    subTasks[&payload] = SubTask{id, true, sc_core::SC_ZERO_TIME};
    ++job.computesIssued;
    job.computeInFlight = true;
    return payload;
}

void Accelerator::advance(std::uint64_t id)
{
    Job& job = jobs.at(id);
    const std::uint64_t slices = std::max<std::uint64_t>(job.chunks, 1);
    if (job.computesDone == slices) {
        finish(id);
        return;
    }
    // Two staging buffers: a chunk may load while fewer than two are loaded or loading and
    // not yet computed. Both buffers fill at once, so two loads can be in flight and the
    // memory's latency hides behind the other transfer.
    while (job.loadsIssued < job.chunks && job.loadsIssued - job.computesDone < 2) {
        queueLoad(id, job, job.loadsIssued);
        ++job.loadsIssued;
    }
    const std::uint64_t ready = job.chunks == 0 ? 1 : job.loadsDone;
    if (!job.computeInFlight && job.computesIssued < ready)
        queueCompute(id, job);
    pumpEvent.notify(sc_core::SC_ZERO_TIME);
}

void Accelerator::finish(std::uint64_t id)
{
    Job& job = jobs.at(id);
    tlm::tlm_generic_payload& request = *job.request;
    request.set_response_status(job.failed ? tlm::TLM_GENERIC_ERROR_RESPONSE
                                           : tlm::TLM_OK_RESPONSE);
    if (!job.failed)
        ++(job.info->kind == NodeKind::Compute ? computeNodes : memoryNodes);
    sc_core::sc_event* finished = job.finished;
    const int socketId = job.socketId;
    if (job.streams)
        --streaming;
    jobs.remove(id);
    if (finished != nullptr) {
        finished->notify();
        return;
    }
    tlm::tlm_phase phase = tlm::BEGIN_RESP;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    target[socketId]->nb_transport_bw(request, phase, delay);
    requests.release(request);
}

void Accelerator::pump()
{
    WallScope wallScope(wall, WallPart::Accelerator);
    send(memory, dmaOutbox, config.dma.engines);
    send(engineSocket, engineOutbox, ~std::uint64_t{0});
}

void Accelerator::send(tlm_utils::simple_initiator_socket<Accelerator>& socket,
                       Outbox& outbox,
                       std::uint64_t limit)
{
    while (!outbox.queue.empty() && !outbox.awaitingEndReq && outbox.inFlight < limit) {
        tlm::tlm_generic_payload* payload = outbox.queue.front();
        outbox.queue.pop_front();
        ++outbox.inFlight;
        SubTask& task = subTasks.at(payload);
        if (!task.compute) {
            const auto* info = EtNodeExtension::find(*payload);
            task.earliestEnd = sc_core::sc_time_stamp() +
                               toScTime((Size::fromBytes(info->info.bytes) / config.dma.bandwidth));
            ++transfers;
        }
        tlm::tlm_phase phase = tlm::BEGIN_REQ;
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        tlm::tlm_sync_enum status = socket->nb_transport_fw(*payload, phase, delay);
        if (status == tlm::TLM_ACCEPTED || (status == tlm::TLM_UPDATED && phase == tlm::BEGIN_REQ))
            outbox.awaitingEndReq = true;
        else if (status == tlm::TLM_COMPLETED ||
                 (status == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP))
            subResponse(*payload, delay);
    }
}

tlm::tlm_sync_enum Accelerator::engineBw(tlm::tlm_generic_payload& payload,
                                         tlm::tlm_phase& phase,
                                         sc_core::sc_time& delay)
{
    WallScope wallScope(wall, WallPart::Accelerator);
    if (phase == tlm::END_REQ) {
        engineOutbox.awaitingEndReq = false;
        pumpEvent.notify(sc_core::SC_ZERO_TIME);
        return tlm::TLM_ACCEPTED;
    }
    if (phase == tlm::BEGIN_RESP) {
        subResponse(payload, delay);
        return tlm::TLM_COMPLETED;
    }
    report("unexpected phase from the compute engine");
    return tlm::TLM_COMPLETED;
}

tlm::tlm_sync_enum Accelerator::memoryBw(tlm::tlm_generic_payload& payload,
                                         tlm::tlm_phase& phase,
                                         sc_core::sc_time& delay)
{
    WallScope wallScope(wall, WallPart::Accelerator);
    if (phase == tlm::END_REQ) {
        dmaOutbox.awaitingEndReq = false;
        pumpEvent.notify(sc_core::SC_ZERO_TIME);
        return tlm::TLM_ACCEPTED;
    }
    if (phase == tlm::BEGIN_RESP) {
        subResponse(payload, delay);
        return tlm::TLM_COMPLETED;
    }
    report("unexpected phase from memory");
    return tlm::TLM_COMPLETED;
}

void Accelerator::subResponse(tlm::tlm_generic_payload& payload, const sc_core::sc_time& delay)
{
    // A transfer ends no earlier than the DMA engine can move its bytes.
    const SubTask& task = subTasks.at(&payload);
    sc_core::sc_time end = sc_core::sc_time_stamp() + delay;
    if (!task.compute && task.earliestEnd > end)
        end = task.earliestEnd;
    subDone.put(&payload, end - sc_core::sc_time_stamp());
}

void Accelerator::onReplayed()
{
    WallScope wallScope(wall, WallPart::Accelerator);
    while (std::optional<std::uint64_t> id = replayed.next())
        finish(*id);
}

void Accelerator::onSubDone()
{
    WallScope wallScope(wall, WallPart::Accelerator);
    while (std::optional<tlm::tlm_generic_payload*> next = subDone.next()) {
        tlm::tlm_generic_payload* payload = *next;
        auto found = subTasks.find(payload);
        const SubTask task = found->second;
        subTasks.erase(found);
        const bool ok = payload->get_response_status() == tlm::TLM_OK_RESPONSE;
        if (task.compute) {
            --engineOutbox.inFlight;
        } else {
            --dmaOutbox.inFlight;
            const std::uint64_t bytes = EtNodeExtension::get(*payload).info.bytes;
            (payload->is_read() ? readBytes : writeBytes) += bytes;
        }
        payload->release();
        pumpEvent.notify(sc_core::SC_ZERO_TIME);

        Job& job = jobs.at(task.job);
        if (!ok)
            job.failed = true;
        if (task.compute) {
            job.computeInFlight = false;
            ++job.computesDone;
            advance(task.job);
        } else if (job.info->kind == NodeKind::Compute) {
            ++job.loadsDone;
            advance(task.job);
        } else if (++job.loadsDone == job.chunks) {
            finish(task.job);
        }
    }
}

} // namespace etsim::accel
