// Longer than most files: the mapping rules of docs/pytorch-import.md are one algorithm over
// one rank's data (matching, self times, GPU links, edges), and its steps share that state.
#include "importers/pytorch/RankGraph.h"

#include "et_driver/OperatorInfo.h"
#include "et_driver/TraceCodec.h"
#include "kernel/Error.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>

namespace etsim::importers::pytorch {

namespace {

using nlohmann::json;

constexpr const char* processGroupNodeName = "## process_group:init ##";
// How far the per-thread matcher looks ahead for a name after a mismatch.
constexpr std::size_t matchWindow = 64;

bool isNcclKernel(const std::string& name)
{
    return name.rfind("ncclKernel", 0) == 0 || name.rfind("ncclDevKernel", 0) == 0 ||
           name.rfind("void ncclKernel", 0) == 0 || name.rfind("void ncclDevKernel", 0) == 0;
}

// Operators etsim's accelerator models can cost from shapes (docs/operators.md).
bool mayHaveShapes(const std::string& name)
{
    if (name.rfind("aten::", 0) != 0)
        return false;
    for (const char* part : {"mm", "linear", "matmul", "conv", "attention"})
        if (name.find(part) != std::string::npos)
            return true;
    return false;
}

void addIntAttr(et::TraceNode& node, const char* name, int64_t value)
{
    ChakraProtoMsg::AttributeProto attr;
    attr.set_name(name);
    attr.set_int64_val(value);
    et::TraceCodec::addAttribute(node, attr);
}

void addStringAttr(et::TraceNode& node, const char* name, const std::string& value)
{
    ChakraProtoMsg::AttributeProto attr;
    attr.set_name(name);
    attr.set_string_val(value);
    et::TraceCodec::addAttribute(node, attr);
}

// An argument list as Chakra's IOInfo keeps it: the host trace's lists as JSON text.
ChakraProtoMsg::IOInfo ioInfo(const IoLists& lists)
{
    ChakraProtoMsg::IOInfo io;
    io.set_values(lists.values);
    io.set_shapes(lists.shapes);
    io.set_types(lists.types);
    return io;
}

uint64_t micros(int64_t ns)
{
    return ns <= 0 ? 0 : static_cast<uint64_t>((ns + 500) / 1000);
}

} // namespace

RankGraph::RankGraph(HostTrace hostTrace,
                     const KinetoTrace* kinetoTrace,
                     uint32_t rankNumber,
                     int64_t worldSize,
                     const ImportOptions& importOptions)
    : host(std::move(hostTrace)), kineto(kinetoTrace), rank(rankNumber), options(importOptions)
{
    summary.rank = rank;
    summary.hostFile = host.file;
    summary.schema = host.schema;
    summary.hostOps = host.ops.size();
    summary.rootNodes = host.rootNodes;
    indexOps();
    try {
        readComms(worldSize);
    } catch (const Error& e) {
        std::string what = e.what();
        if (what.rfind(host.file, 0) == 0)
            throw;
        throw Error(host.file + ": " + what);
    }
    if (kineto != nullptr) {
        summary.kinetoFile = kineto->file;
        summary.kinetoOps = kineto->ops.size();
        for (const KinetoEvent& step : kineto->steps)
            summary.stepSpanNs += step.durationNs;
        matchKineto();
        computeSelfTimes();
        linkGpu();
    } else {
        synthesiseGpu();
    }
    attachComms();
}

int64_t RankGraph::hostIndex(int64_t id) const
{
    auto it = std::lower_bound(
        host.ops.begin(), host.ops.end(), id, [](const HostOp& o, int64_t v) { return o.id < v; });
    return it != host.ops.end() && it->id == id ? it - host.ops.begin() : -1;
}

void RankGraph::indexOps()
{
    std::size_t n = host.ops.size();
    parentOf.assign(n, -1);
    threadOfOp.assign(n, 0);
    std::map<int64_t, std::size_t> threadIndex;
    for (std::size_t i = 0; i < n; ++i) {
        // A caller starts, so takes its id, before its callees: a parent id that is not
        // smaller is not a caller (and would let the walks up the call tree loop).
        int64_t parent = host.ops[i].parent < host.ops[i].id ? hostIndex(host.ops[i].parent) : -1;
        parentOf[i] = parent;
        auto [it, added] = threadIndex.emplace(host.ops[i].tid, threadOps.size());
        if (added)
            threadOps.emplace_back();
        threadOps[it->second].push_back(i);
        threadOfOp[i] = static_cast<int64_t>(it->second);
    }
    // Host-only keys: the id, which PyTorch draws from one counter for all threads when an
    // operator starts; an operator ends after its last descendant.
    startKey.assign(n, 0);
    endKey.assign(n, 0);
    for (std::size_t op = 0; op < n; ++op)
        startKey[op] = endKey[op] = 2 * host.ops[op].id;
    for (std::size_t k = n; k-- > 0;) {
        endKey[k] = std::max(endKey[k], startKey[k] + 1);
        if (parentOf[k] >= 0)
            endKey[static_cast<std::size_t>(parentOf[k])] =
                std::max(endKey[static_cast<std::size_t>(parentOf[k])], endKey[k] + 1);
    }
    selfNs.assign(n, 0);
    kinetoOfOp.assign(n, -1);
    launchesOfOp.assign(n, 0);
    commOfOp.assign(n, -1);
}

void RankGraph::readComms(int64_t worldSize)
{
    groupTable = readGroupTable(host);
    // 1.0.1 names a group only by a per-process pointer: with one pointer in the trace it is
    // the group of all ranks; with several, which is which cannot be told across ranks.
    std::set<int64_t> pointers;
    for (std::size_t i = 0; i < host.ops.size(); ++i) {
        const HostOp& op = host.ops[i];
        if (op.name != "record_param_comms" || !op.attrs.empty() || !groupTable.byPointer.empty())
            continue;
        std::size_t base = dataArgument(op) ? 1 : 0;
        json values = op.inputValues();
        bool wait = base + 3 < values.size() && values[base + 3] == "wait";
        if (!wait && base + 1 < values.size() && values[base + 1].is_number_integer())
            pointers.insert(values[base + 1].get<int64_t>());
    }
    if (pointers.size() > 1)
        throw Error(host.file + ": the trace (schema " + host.schema + ") uses " +
                    std::to_string(pointers.size()) +
                    " process groups named only by per-process pointers and has no "
                    "`## process_group:init ##` node, so their members cannot be told; "
                    "capture with PyTorch 2.2 or later (schema 1.0.2+), which records the groups");
    for (std::size_t i = 0; i < host.ops.size(); ++i) {
        if (host.ops[i].name != "record_param_comms")
            continue;
        CommParse parse = parseCommRecord(host, i, groupTable, "0");
        if (!parse.record) {
            if (parse.skipped == "wait")
                ++summary.waitRecords;
            else
                ++summary.unknownCommRecords[parse.skipped];
            continue;
        }
        if (parse.record->groupSize < 0 && parse.record->group == "0")
            parse.record->groupSize = worldSize;
        commOfOp[i] = static_cast<int64_t>(comms.size());
        comms.push_back(*parse.record);
        commBytes.push_back(parse.record->bytes);
    }
    for (const HostOp& op : host.ops)
        if (op.name == processGroupNodeName)
            metadataFromHost = true;
    // The converter's rendering of the group list (spec 6): a Python list of one JSON string.
    std::string list = groupTable.initJson;
    if (list.empty() && !comms.empty()) {
        std::set<std::string> used;
        for (const CommRecord& c : comms)
            used.insert(c.group);
        list = "[";
        for (const std::string& g : used) {
            int64_t size = g == "0" ? worldSize : -1;
            for (const CommRecord& c : comms)
                if (c.group == g && c.groupSize > 0)
                    size = c.groupSize;
            list += std::string(list.size() > 1 ? ", " : "") + "{\"pg_name\": \"" + g +
                    "\", \"pg_desc\": \"" + (g == "0" ? "default_pg" : "") +
                    "\", \"backend_config\": \"cuda:nccl\", \"ranks\": [], \"group_size\": " +
                    std::to_string(size) + ", \"group_count\": 1}";
            groupTable.groups[g].size = size;
        }
        list += "]";
    }
    if (!list.empty())
        metadataText =
            list.find('\'') == std::string::npos ? "['" + list + "']" : "[\"" + list + "\"]";
}

void RankGraph::matchKineto()
{
    const std::vector<KinetoEvent>& events = kineto->ops;
    opOfKineto.assign(events.size(), -1);
    auto match = [&](std::size_t op, std::size_t event) {
        kinetoOfOp[op] = static_cast<int64_t>(event);
        opOfKineto[event] = static_cast<int64_t>(op);
        ++summary.matchedOps;
    };
    bool haveRf = !events.empty();
    for (const KinetoEvent& e : events)
        haveRf = haveRf && e.rfId >= 0;
    if (haveRf) {
        summary.matchedBy = "rf_id";
        std::unordered_map<int64_t, std::size_t> byRf;
        for (std::size_t e = 0; e < events.size(); ++e)
            byRf.emplace(events[e].rfId, e);
        for (std::size_t i = 0; i < host.ops.size(); ++i) {
            if (!host.ops[i].rfId)
                continue;
            auto it = byRf.find(*host.ops[i].rfId);
            if (it != byRf.end() && events[it->second].name == host.ops[i].name &&
                opOfKineto[it->second] < 0)
                match(i, it->second);
        }
    } else {
        // Per thread: host ops in id order against the thread's events in External-id order,
        // one to one by name, re-synchronising after a mismatch. External id alone names the
        // wrong op in real traces; rf_id is absent in older Kineto files.
        summary.matchedBy = "per-thread order";
        std::map<int64_t, std::vector<std::size_t>> byTid;
        for (std::size_t e = 0; e < events.size(); ++e)
            byTid[events[e].tid].push_back(e);
        for (auto& [tid, list] : byTid)
            std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
                const KinetoEvent& x = events[a];
                const KinetoEvent& y = events[b];
                if (x.externalId >= 0 && y.externalId >= 0 && x.externalId != y.externalId)
                    return x.externalId < y.externalId;
                return std::tie(x.startNs, y.durationNs) < std::tie(y.startNs, x.durationNs);
            });
        auto align = [&](const std::vector<std::size_t>& ops,
                         const std::vector<std::size_t>& evs,
                         bool apply) {
            std::size_t i = 0;
            std::size_t j = 0;
            std::size_t matched = 0;
            while (i < ops.size() && j < evs.size()) {
                const std::string& name = host.ops[ops[i]].name;
                if (name == events[evs[j]].name) {
                    if (apply)
                        match(ops[i], evs[j]);
                    ++matched;
                    ++i;
                    ++j;
                    continue;
                }
                std::size_t skipEvents = 0;
                for (std::size_t d = 1; d <= matchWindow && j + d < evs.size(); ++d)
                    if (events[evs[j + d]].name == name) {
                        skipEvents = d;
                        break;
                    }
                std::size_t skipOps = 0;
                for (std::size_t d = 1; d <= matchWindow && i + d < ops.size(); ++d)
                    if (host.ops[ops[i + d]].name == events[evs[j]].name) {
                        skipOps = d;
                        break;
                    }
                if (skipEvents > 0 && (skipOps == 0 || skipEvents <= skipOps))
                    j += skipEvents;
                else if (skipOps > 0)
                    i += skipOps;
                else {
                    ++i;
                    ++j;
                }
            }
            return matched;
        };
        std::set<int64_t> used;
        std::vector<std::size_t> threadOrder(threadOps.size());
        for (std::size_t t = 0; t < threadOrder.size(); ++t)
            threadOrder[t] = t;
        std::sort(threadOrder.begin(), threadOrder.end(), [&](std::size_t a, std::size_t b) {
            return threadOps[a].size() > threadOps[b].size();
        });
        for (std::size_t t : threadOrder) {
            int64_t best = -1;
            std::size_t bestScore = 0;
            for (const auto& [tid, list] : byTid) {
                if (used.count(tid) != 0)
                    continue;
                std::size_t score = align(threadOps[t], list, false);
                if (score > bestScore) {
                    bestScore = score;
                    best = tid;
                }
            }
            if (best < 0)
                continue;
            used.insert(best);
            align(threadOps[t], byTid[best], true);
        }
    }
    summary.kinetoOpsWithoutHostOp = events.size() - summary.matchedOps;
    // Times: a matched op has its measured interval; an unmatched one sits, with no duration,
    // where its predecessor on the thread started.
    for (const std::vector<std::size_t>& thread : threadOps) {
        int64_t last = kineto->steps.empty() ? 0 : kineto->steps.front().startNs;
        for (std::size_t op : thread) {
            if (kinetoOfOp[op] >= 0) {
                const KinetoEvent& e = events[static_cast<std::size_t>(kinetoOfOp[op])];
                startKey[op] = e.startNs;
                endKey[op] = e.endNs();
            } else {
                startKey[op] = endKey[op] = last;
            }
            last = startKey[op];
        }
    }
}

void RankGraph::computeSelfTimes()
{
    // A moment of host time belongs to the most recently started operator that is running, on
    // any thread: within a thread that is the innermost operator (exclusive time); across
    // threads it is the one the others wait for (the main thread blocked in backward() while
    // the autograd thread works). So the rank's host time is counted once. Synchronising calls
    // take their time away from their operator when sync edges model the wait; a gap with no
    // operator running goes to the operator that starts next.
    struct Item {
        int64_t start;
        int64_t end;
        int64_t order;
        int64_t op; // -1: a synchronising call
    };
    std::vector<Item> items;
    for (std::size_t i = 0; i < host.ops.size(); ++i)
        if (kinetoOfOp[i] >= 0)
            items.push_back(
                {startKey[i], endKey[i], static_cast<int64_t>(i), static_cast<int64_t>(i)});
    // A call is innermost among what starts with it.
    if (options.syncEdges)
        for (const KinetoEvent& call : kineto->runtime)
            if (isSynchronizingCall(call.name))
                items.push_back(
                    {call.startNs,
                     call.endNs(),
                     std::numeric_limits<int64_t>::max() / 2 + static_cast<int64_t>(items.size()),
                     -1});
    std::vector<std::tuple<int64_t, int, std::size_t>> events; // time, 0 end / 1 start, item
    events.reserve(2 * items.size());
    for (std::size_t k = 0; k < items.size(); ++k) {
        if (items[k].end <= items[k].start)
            continue; // owns no time
        events.emplace_back(items[k].start, 1, k);
        events.emplace_back(items[k].end, 0, k);
    }
    std::sort(events.begin(), events.end());
    std::set<std::pair<std::pair<int64_t, int64_t>, std::size_t>> active;
    int64_t previous = 0;
    bool started = false;
    int64_t pendingGap = 0;
    for (const auto& [time, kind, k] : events) {
        if (started && time > previous) {
            if (active.empty())
                pendingGap += time - previous;
            else {
                const Item& owner = items[active.rbegin()->second];
                if (owner.op >= 0)
                    selfNs[static_cast<std::size_t>(owner.op)] += time - previous;
                else
                    summary.syncWaitNs += time - previous;
            }
        }
        previous = time;
        started = true;
        const Item& item = items[k];
        auto key = std::make_pair(std::make_pair(item.start, item.order), k);
        if (kind == 0) {
            active.erase(key);
            continue;
        }
        active.insert(key);
        if (item.op >= 0 && pendingGap > 0) {
            selfNs[static_cast<std::size_t>(item.op)] += pendingGap;
            summary.gapFoldedNs += pendingGap;
            pendingGap = 0;
        }
    }
}

void RankGraph::linkGpu()
{
    const std::vector<KinetoEvent>& ops = kineto->ops;
    // Innermost matched op enclosing each runtime call on the call's thread.
    std::unordered_map<int64_t, std::size_t> runtimeByCorrelation;
    for (std::size_t r = 0; r < kineto->runtime.size(); ++r)
        if (kineto->runtime[r].correlation >= 0)
            runtimeByCorrelation.emplace(kineto->runtime[r].correlation, r);
    std::map<int64_t, std::vector<std::size_t>> opsByTid;
    for (std::size_t e = 0; e < ops.size(); ++e)
        if (opOfKineto[e] >= 0)
            opsByTid[ops[e].tid].push_back(e);
    for (auto& [tid, list] : opsByTid)
        std::sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) {
            return std::make_tuple(ops[a].startNs, -ops[a].durationNs, opOfKineto[a]) <
                   std::make_tuple(ops[b].startNs, -ops[b].durationNs, opOfKineto[b]);
        });
    std::map<int64_t, std::vector<std::size_t>> callsByTid;
    for (std::size_t r = 0; r < kineto->runtime.size(); ++r)
        callsByTid[kineto->runtime[r].tid].push_back(r);
    std::vector<int64_t> launcherOfCall(kineto->runtime.size(), -1);
    for (auto& [tid, calls] : callsByTid) {
        std::sort(calls.begin(), calls.end(), [&](std::size_t a, std::size_t b) {
            return kineto->runtime[a].startNs < kineto->runtime[b].startNs;
        });
        const std::vector<std::size_t>& list = opsByTid[tid];
        std::vector<std::size_t> stack;
        std::size_t next = 0;
        for (std::size_t r : calls) {
            int64_t t = kineto->runtime[r].startNs;
            while (next < list.size() && ops[list[next]].startNs <= t) {
                while (!stack.empty() && ops[stack.back()].endNs() <= ops[list[next]].startNs &&
                       ops[stack.back()].endNs() < ops[list[next]].endNs())
                    stack.pop_back();
                stack.push_back(list[next++]);
            }
            while (!stack.empty() && ops[stack.back()].endNs() < t)
                stack.pop_back();
            for (std::size_t s = stack.size(); s-- > 0;)
                if (ops[stack[s]].startNs <= t && ops[stack[s]].endNs() >= t) {
                    launcherOfCall[r] = opOfKineto[stack[s]];
                    break;
                }
        }
    }
    for (const KinetoEvent& e : kineto->gpu) {
        Gpu g;
        g.name = e.name;
        g.startNs = e.startNs;
        g.durationNs = e.durationNs;
        g.stream = e.stream;
        g.correlation = e.correlation;
        g.nccl = isNcclKernel(e.name);
        auto call = runtimeByCorrelation.find(e.correlation);
        if (call != runtimeByCorrelation.end()) {
            g.launchOp = launcherOfCall[call->second];
            g.key = kineto->runtime[call->second].startNs;
        }
        if (g.launchOp < 0) {
            ++summary.kernelsWithoutHostOp;
            g.key = e.startNs;
            if (!options.unlinkedKernels) {
                ++summary.kernelsDropped;
                continue;
            }
        }
        gpus.push_back(std::move(g));
    }
    summary.gpuEvents = kineto->gpu.size();
}

void RankGraph::synthesiseGpu()
{
    // Without Kineto, the GPU work of an operator etsim can cost from its shapes becomes one
    // GPU node; only the innermost such operator counts (aten::linear runs aten::addmm).
    std::size_t n = host.ops.size();
    std::vector<std::optional<et::OperatorInfo>> known(n);
    for (std::size_t i = 0; i < n; ++i) {
        const HostOp& op = host.ops[i];
        if (!mayHaveShapes(op.name))
            continue;
        bool onGpu = false;
        for (const Tensor& t : op.inputs.tensors)
            onGpu = onGpu || t.device.rfind("cuda", 0) == 0 || t.device.rfind("hip", 0) == 0;
        if (!onGpu)
            continue;
        et::TraceNode view;
        view.name = op.name;
        view.type = et::NodeType::Comp;
        addStringAttr(view, "op_schema", op.opSchema);
        et::TraceCodec::setInputs(view, ioInfo(op.inputs));
        et::OperatorInfo info = et::operatorInfo(view);
        if (info.kind != et::OpKind::Unknown)
            known[i] = std::move(info);
    }
    std::vector<char> below(n, 0);
    for (std::size_t k = n; k-- > 0;)
        if (parentOf[k] >= 0 && (known[k].has_value() || below[k] != 0))
            below[static_cast<std::size_t>(parentOf[k])] = 1;
    for (std::size_t i = 0; i < n; ++i) {
        if (!known[i] || below[i])
            continue;
        Gpu g;
        g.name = host.ops[i].name;
        g.launchOp = static_cast<int64_t>(i);
        g.key = startKey[i] + 1;
        g.stream = 0;
        g.info = known[i];
        gpus.push_back(std::move(g));
    }
    // Each collective is one GPU node on the communication stream, launched by its nccl:<op>
    // child (or the record itself).
    for (std::size_t c = 0; c < comms.size(); ++c) {
        std::size_t launch = comms[c].op;
        if (launch + 1 < n && parentOf[launch + 1] == static_cast<int64_t>(launch) &&
            host.ops[launch + 1].name.rfind("nccl:", 0) == 0)
            launch += 1;
        Gpu g;
        g.name = host.ops[launch].name;
        g.launchOp = static_cast<int64_t>(launch);
        g.key = startKey[launch] + 1;
        g.stream = 1;
        g.comm = static_cast<int64_t>(c);
        gpus.push_back(std::move(g));
    }
}

void RankGraph::attachComms()
{
    std::stable_sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) {
        return std::tie(a.stream, a.startNs, a.key) < std::tie(b.stream, b.startNs, b.key);
    });
    if (kineto == nullptr)
        std::stable_sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) {
            return std::tie(a.stream, a.key) < std::tie(b.stream, b.key);
        });
    std::vector<int64_t> firstKernel(comms.size(), -1);
    for (std::size_t g = 0; g < gpus.size(); ++g) {
        Gpu& gpu = gpus[g];
        if (gpu.launchOp >= 0)
            ++launchesOfOp[static_cast<std::size_t>(gpu.launchOp)];
        if (kineto == nullptr) {
            if (gpu.comm >= 0)
                firstKernel[static_cast<std::size_t>(gpu.comm)] = static_cast<int64_t>(g);
            else
                ++summary.gpuNodesFromShapes;
            continue;
        }
        if (!gpu.nccl)
            continue;
        ++summary.ncclKernels;
        // The collective is the nearest record_param_comms above the launching op.
        int64_t at = gpu.launchOp;
        for (int depth = 0; at >= 0 && depth < 4; ++depth) {
            if (commOfOp[static_cast<std::size_t>(at)] >= 0)
                break;
            at = parentOf[static_cast<std::size_t>(at)];
        }
        if (at < 0 || commOfOp[static_cast<std::size_t>(at)] < 0) {
            ++summary.ncclKernelsWithoutCollective;
            continue;
        }
        auto c = static_cast<std::size_t>(commOfOp[static_cast<std::size_t>(at)]);
        ++summary.ncclKernelsAttached;
        if (firstKernel[c] < 0) {
            firstKernel[c] = static_cast<int64_t>(g);
            gpu.comm = static_cast<int64_t>(c);
            continue;
        }
        // A collective run as several kernels is one node spanning them all.
        Gpu& first = gpus[static_cast<std::size_t>(firstKernel[c])];
        int64_t end = std::max(first.startNs + first.durationNs, gpu.startNs + gpu.durationNs);
        first.startNs = std::min(first.startNs, gpu.startNs);
        first.durationNs = end - first.startNs;
        gpu.merged = true;
        ++summary.ncclKernelsMerged;
    }
    for (std::size_t c = 0; c < comms.size(); ++c)
        if (firstKernel[c] < 0)
            ++summary.collectivesWithoutKernel;
    for (std::size_t i = 0; i < host.ops.size(); ++i)
        (launchesOfOp[i] > 0 ? summary.hostOpsWithKernel : summary.hostOpsWithoutKernel) += 1;
    // Collectives without a kernel in a Kineto trace still happen: they get a node of their
    // own (no measured duration), launched by the record.
    if (kineto != nullptr)
        for (std::size_t c = 0; c < comms.size(); ++c)
            if (firstKernel[c] < 0) {
                Gpu g;
                g.name = host.ops[comms[c].op].name;
                g.launchOp = static_cast<int64_t>(comms[c].op);
                g.key = startKey[comms[c].op];
                g.startNs = startKey[comms[c].op];
                g.stream = -2;
                g.comm = static_cast<int64_t>(c);
                gpus.push_back(std::move(g));
            }
}

void RankGraph::addDep(uint32_t node, uint32_t on)
{
    if (node == on)
        return;
    std::vector<uint32_t>& deps = nodes[node].deps;
    if (std::find(deps.begin(), deps.end(), on) == deps.end())
        deps.push_back(on);
}

void RankGraph::buildNodes()
{
    nodes.clear();
    hostNode.assign(host.ops.size(), -1);
    gpuNode.assign(gpus.size(), -1);
    if (!metadataText.empty() && !metadataFromHost) {
        Node meta;
        meta.kind = Node::Kind::Metadata;
        meta.id = static_cast<uint64_t>(host.maxId) + 1 + gpus.size();
        meta.key = std::numeric_limits<int64_t>::min();
        nodes.push_back(meta);
    }
    for (std::size_t i = 0; i < host.ops.size(); ++i) {
        Node node;
        bool metadata = host.ops[i].name == processGroupNodeName;
        node.kind = metadata ? Node::Kind::Metadata : Node::Kind::Host;
        node.index = i;
        node.id = static_cast<uint64_t>(host.ops[i].id);
        node.key = metadata ? std::numeric_limits<int64_t>::min() : startKey[i];
        node.kept = metadata || options.hostOps;
        hostNode[i] = static_cast<int64_t>(nodes.size());
        nodes.push_back(std::move(node));
    }
    for (std::size_t g = 0; g < gpus.size(); ++g) {
        if (gpus[g].merged)
            continue;
        Node node;
        node.kind = Node::Kind::Gpu;
        node.index = g;
        node.id = static_cast<uint64_t>(host.maxId) + 1 + g;
        node.key = gpus[g].key;
        gpuNode[g] = static_cast<int64_t>(nodes.size());
        nodes.push_back(std::move(node));
    }
}

void RankGraph::addEdges()
{
    // Program order on each host thread.
    for (const std::vector<std::size_t>& thread : threadOps)
        for (std::size_t k = 1; k < thread.size(); ++k)
            addDep(static_cast<uint32_t>(hostNode[thread[k]]),
                   static_cast<uint32_t>(hostNode[thread[k - 1]]));
    // A GPU op after its launch, and after its predecessor on its stream.
    int64_t previous = -1;
    for (std::size_t g = 0; g < gpus.size(); ++g) {
        if (gpuNode[g] < 0)
            continue;
        auto node = static_cast<uint32_t>(gpuNode[g]);
        if (gpus[g].launchOp >= 0) {
            addDep(node,
                   static_cast<uint32_t>(hostNode[static_cast<std::size_t>(gpus[g].launchOp)]));
            ++summary.launchEdges;
        }
        if (previous >= 0 && gpus[static_cast<std::size_t>(previous)].stream == gpus[g].stream &&
            gpus[g].stream != -2) {
            addDep(node, static_cast<uint32_t>(gpuNode[static_cast<std::size_t>(previous)]));
            ++summary.streamEdges;
        }
        previous = static_cast<int64_t>(g);
    }
    addTensorEdges();
    if (kineto != nullptr) {
        addCrossThreadEdges();
        if (options.syncEdges)
            addSyncEdges();
    }
}

void RankGraph::addTensorEdges()
{
    // Producer to consumer by tensor identity (id, storage): the last operator that ended
    // with the tensor among its outputs before the consumer started. Same-thread pairs are
    // already ordered by the thread's program order; a consumer's GPU work waits for the
    // producer's last GPU op when that ran on another stream.
    std::size_t n = host.ops.size();
    std::vector<int64_t> lastGpu(n, -1);
    for (std::size_t g = 0; g < gpus.size(); ++g) {
        if (gpuNode[g] < 0)
            continue;
        for (int64_t at = gpus[g].launchOp; at >= 0; at = parentOf[static_cast<std::size_t>(at)]) {
            int64_t& slot = lastGpu[static_cast<std::size_t>(at)];
            if (slot < 0 || gpus[static_cast<std::size_t>(slot)].key <= gpus[g].key)
                slot = static_cast<int64_t>(g);
            else
                break;
        }
    }
    std::vector<std::vector<std::size_t>> launched(n);
    for (std::size_t g = 0; g < gpus.size(); ++g)
        if (gpuNode[g] >= 0 && gpus[g].launchOp >= 0)
            launched[static_cast<std::size_t>(gpus[g].launchOp)].push_back(g);
    std::vector<std::size_t> byStart(n);
    std::vector<std::size_t> byEnd(n);
    for (std::size_t i = 0; i < n; ++i)
        byStart[i] = byEnd[i] = i;
    std::sort(byStart.begin(), byStart.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(startKey[a], a) < std::tie(startKey[b], b);
    });
    std::sort(byEnd.begin(), byEnd.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(endKey[a], a) < std::tie(endKey[b], b);
    });
    std::unordered_map<uint64_t, std::size_t> producer;
    auto tensorKey = [](const Tensor& t) {
        return static_cast<uint64_t>(t.id) * 1000003ULL ^ static_cast<uint64_t>(t.storage);
    };
    std::size_t e = 0;
    for (std::size_t c : byStart) {
        while (e < n && endKey[byEnd[e]] <= startKey[c]) {
            std::size_t p = byEnd[e++];
            if (endKey[p] == startKey[p] && kinetoOfOp[p] < 0 && kineto != nullptr)
                continue; // unmatched op: no time to order by
            for (const Tensor& t : host.ops[p].outputs.tensors)
                producer[tensorKey(t)] = p;
        }
        for (const Tensor& t : host.ops[c].inputs.tensors) {
            auto it = producer.find(tensorKey(t));
            if (it == producer.end())
                continue;
            std::size_t p = it->second;
            if (threadOfOp[p] != threadOfOp[c]) {
                std::size_t before = nodes[static_cast<std::size_t>(hostNode[c])].deps.size();
                addDep(static_cast<uint32_t>(hostNode[c]), static_cast<uint32_t>(hostNode[p]));
                summary.dataEdges +=
                    nodes[static_cast<std::size_t>(hostNode[c])].deps.size() - before;
            }
            int64_t source = lastGpu[p];
            if (source < 0)
                continue;
            for (std::size_t g : launched[c]) {
                if (gpus[static_cast<std::size_t>(source)].stream == gpus[g].stream ||
                    gpus[static_cast<std::size_t>(source)].key >= gpus[g].key)
                    continue;
                auto node = static_cast<std::size_t>(gpuNode[g]);
                std::size_t before = nodes[node].deps.size();
                addDep(static_cast<uint32_t>(node),
                       static_cast<uint32_t>(gpuNode[static_cast<std::size_t>(source)]));
                summary.dataEdges += nodes[node].deps.size() - before;
            }
        }
    }
}

void RankGraph::addCrossThreadEdges()
{
    // An operator starts after what other threads finished before it started (the autograd
    // thread after the forward pass, the main thread after backward()).
    for (std::size_t t = 0; t < threadOps.size(); ++t)
        for (std::size_t u = 0; u < threadOps.size(); ++u) {
            if (t == u)
                continue;
            const std::vector<std::size_t>& mine = threadOps[t];
            const std::vector<std::size_t>& theirs = threadOps[u];
            std::vector<std::size_t> byEnd(theirs.size());
            for (std::size_t k = 0; k < theirs.size(); ++k)
                byEnd[k] = k;
            std::sort(byEnd.begin(), byEnd.end(), [&](std::size_t a, std::size_t b) {
                return endKey[theirs[a]] < endKey[theirs[b]];
            });
            std::size_t next = 0;
            int64_t best = -1;
            int64_t added = -1;
            for (std::size_t op : mine) {
                if (kinetoOfOp[op] < 0)
                    continue;
                while (next < byEnd.size() && endKey[theirs[byEnd[next]]] <= startKey[op]) {
                    if (kinetoOfOp[theirs[byEnd[next]]] >= 0)
                        best = std::max(best, static_cast<int64_t>(byEnd[next]));
                    ++next;
                }
                if (best > added) {
                    addDep(static_cast<uint32_t>(hostNode[op]),
                           static_cast<uint32_t>(hostNode[theirs[static_cast<std::size_t>(best)]]));
                    ++summary.crossThreadEdges;
                    added = best;
                }
            }
        }
}

void RankGraph::addSyncEdges()
{
    // After a synchronising call returns, the thread's next operator waits for the GPU work
    // that had finished by then (the last such op of each stream).
    std::map<int64_t, std::vector<std::size_t>> byStream;
    for (std::size_t g = 0; g < gpus.size(); ++g)
        if (gpuNode[g] >= 0 && gpus[g].stream != -2)
            byStream[gpus[g].stream].push_back(g);
    std::map<int64_t, std::size_t> threadOfTid;
    for (std::size_t i = 0; i < host.ops.size(); ++i)
        if (kinetoOfOp[i] >= 0)
            threadOfTid[kineto->ops[static_cast<std::size_t>(kinetoOfOp[i])].tid] =
                static_cast<std::size_t>(threadOfOp[i]);
    for (const KinetoEvent& call : kineto->runtime) {
        if (!isSynchronizingCall(call.name))
            continue;
        auto thread = threadOfTid.find(call.tid);
        if (thread == threadOfTid.end())
            continue;
        const std::vector<std::size_t>& ops = threadOps[thread->second];
        int64_t target = -1;
        for (std::size_t op : ops)
            if (kinetoOfOp[op] >= 0 && startKey[op] >= call.endNs()) {
                target = static_cast<int64_t>(op);
                break;
            }
        if (target < 0)
            continue;
        auto node = static_cast<uint32_t>(hostNode[static_cast<std::size_t>(target)]);
        for (const auto& [stream, list] : byStream) {
            int64_t last = -1;
            for (std::size_t g : list)
                if (gpus[g].startNs + gpus[g].durationNs <= call.endNs())
                    last = static_cast<int64_t>(g);
            if (last < 0)
                continue;
            std::size_t before = nodes[node].deps.size();
            addDep(node, static_cast<uint32_t>(gpuNode[static_cast<std::size_t>(last)]));
            summary.syncEdges += nodes[node].deps.size() - before;
        }
    }
}

std::vector<uint32_t> RankGraph::order() const
{
    // Topological order, earliest key first among the ready nodes.
    std::vector<uint32_t> pending(nodes.size(), 0);
    std::vector<std::vector<uint32_t>> users(nodes.size());
    for (uint32_t v = 0; v < nodes.size(); ++v)
        for (uint32_t d : nodes[v].deps) {
            ++pending[v];
            users[d].push_back(v);
        }
    using Entry = std::pair<int64_t, uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (uint32_t v = 0; v < nodes.size(); ++v)
        if (pending[v] == 0)
            ready.emplace(nodes[v].key, v);
    std::vector<uint32_t> out;
    out.reserve(nodes.size());
    while (!ready.empty()) {
        uint32_t v = ready.top().second;
        ready.pop();
        out.push_back(v);
        for (uint32_t u : users[v])
            if (--pending[u] == 0)
                ready.emplace(nodes[u].key, u);
    }
    if (out.size() != nodes.size()) {
        for (uint32_t v = 0; v < nodes.size(); ++v)
            if (pending[v] > 0)
                throw Error(host.file + ": internal error: the dependencies built for node " +
                            std::to_string(nodes[v].id) +
                            " form a cycle; please report this trace");
    }
    return out;
}

void RankGraph::contract(const std::vector<uint32_t>& topo)
{
    // Dropped nodes pass their dependencies on: a kept node depends on the kept nodes its
    // dropped predecessors depended on. Per GPU stream only the latest one is needed, as the
    // stream orders the rest.
    std::vector<std::vector<uint32_t>> frontier(nodes.size());
    std::vector<uint32_t> position(nodes.size());
    for (uint32_t p = 0; p < topo.size(); ++p)
        position[topo[p]] = p;
    auto streamOf = [&](uint32_t v) -> int64_t {
        const Node& node = nodes[v];
        return node.kind == Node::Kind::Gpu ? gpus[node.index].stream
                                            : std::numeric_limits<int64_t>::min() + v;
    };
    auto merge = [&](std::vector<uint32_t>& into, uint32_t v) {
        for (uint32_t& existing : into)
            if (streamOf(existing) == streamOf(v)) {
                if (position[v] > position[existing])
                    existing = v;
                return;
            }
        into.push_back(v);
    };
    for (uint32_t v : topo) {
        std::vector<uint32_t> reach;
        for (uint32_t d : nodes[v].deps) {
            if (nodes[d].kept)
                merge(reach, d);
            else
                for (uint32_t f : frontier[d])
                    merge(reach, f);
        }
        if (nodes[v].kept)
            nodes[v].deps = std::move(reach);
        else
            frontier[v] = std::move(reach);
    }
}

void RankGraph::fill(const Node& node, et::TraceNode& out) const
{
    out.reset();
    out.id = node.id;
    if (node.kind == Node::Kind::Metadata) {
        out.name = processGroupNodeName;
        out.type = et::NodeType::Metadata;
        out.setIsCpuOp(true);
        ChakraProtoMsg::IOInfo inputs;
        inputs.set_values(metadataText);
        inputs.set_types("['String']");
        et::TraceCodec::setInputs(out, inputs);
        return;
    }
    const Gpu& gpu = gpus[node.index];
    out.name = gpu.name;
    out.durationMicros = micros(gpu.durationNs);
    if (kineto != nullptr)
        out.startTimeMicros = micros(gpu.startNs);
    if (gpu.comm < 0) {
        out.type = et::NodeType::Comp;
        out.setIsCpuOp(false);
        if (gpu.info) {
            const HostOp& op = host.ops[static_cast<std::size_t>(gpu.launchOp)];
            et::applyOperatorInfo(out, *gpu.info);
            uint64_t bytes = 0;
            for (const Tensor& t : op.inputs.tensors)
                bytes += static_cast<uint64_t>(std::max<int64_t>(t.bytes(), 0));
            for (const Tensor& t : op.outputs.tensors)
                bytes += static_cast<uint64_t>(std::max<int64_t>(t.bytes(), 0));
            out.setTensorSize(bytes);
            addIntAttr(out, "host_op", op.id);
        } else {
            addIntAttr(out, "stream", gpu.stream);
            addIntAttr(out, "correlation", gpu.correlation);
        }
        return;
    }
    const CommRecord& comm = comms[static_cast<std::size_t>(gpu.comm)];
    int64_t bytes = commBytes[static_cast<std::size_t>(gpu.comm)];
    out.setIsCpuOp(false);
    if (comm.kind == CommKind::Collective) {
        out.type = et::NodeType::CommColl;
        out.setCommType(comm.type);
        out.setPgName(comm.group);
    } else {
        out.type = comm.kind == CommKind::Send ? et::NodeType::CommSend : et::NodeType::CommRecv;
        auto self = static_cast<int32_t>(rank);
        auto peer = static_cast<int32_t>(comm.peer);
        out.setCommSrc(comm.kind == CommKind::Send ? self : peer);
        out.setCommDst(comm.kind == CommKind::Send ? peer : self);
        out.setCommTag(static_cast<int32_t>(comm.tag));
    }
    out.setCommSize(bytes);
    addStringAttr(out, "collective_name", comm.collectiveName);
    addIntAttr(out, "comm_seq", comm.seq);
    if (comm.groupSize > 0)
        addIntAttr(out, "pg_size", comm.groupSize);
    if (bytes != comm.bytes)
        addIntAttr(out, "comm_size_local", comm.bytes);
    if (comm.kind == CommKind::Collective &&
        (comm.type == et::CollectiveType::Broadcast || comm.type == et::CollectiveType::Reduce ||
         comm.type == et::CollectiveType::Gather || comm.type == et::CollectiveType::Scatter))
        addIntAttr(out, "comm_root", comm.rankArgument);
    if (kineto != nullptr && gpu.stream >= 0)
        addIntAttr(out, "stream", gpu.stream);
    addIntAttr(out, "host_op", host.ops[comm.op].id);
}

void RankGraph::fillHost(const Node& node, ChakraProtoMsg::Node& out) const
{
    // Host ops are most of the nodes: written straight as protobuf, attributes in the
    // encodings spec section 9 asks for.
    const HostOp& op = host.ops[node.index];
    out.set_id(node.id);
    out.set_name(op.name);
    out.set_type(ChakraProtoMsg::COMP_NODE);
    if (kinetoOfOp[node.index] >= 0)
        out.set_start_time_micros(micros(startKey[node.index]));
    out.set_duration_micros(micros(selfNs[node.index]));
    auto attr = [&](const char* name) {
        ChakraProtoMsg::AttributeProto* a = out.add_attr();
        a->set_name(name);
        return a;
    };
    attr("is_cpu_op")->set_bool_val(true);
    if (!op.opSchema.empty())
        attr("op_schema")->set_string_val(op.opSchema);
    if (op.rfId)
        attr("rf_id")->set_int64_val(*op.rfId);
    attr("tid")->set_int64_val(op.tid);
    attr("seq_id")->set_int64_val(op.seqId);
    attr("scope")->set_int64_val(op.scope);
    attr("fw_parent")->set_int64_val(op.fwParent);
    attr("fw_tid")->set_int64_val(op.fwTid);
    *out.mutable_inputs() = ioInfo(op.inputs);
    *out.mutable_outputs() = ioInfo(op.outputs);
}

void RankGraph::emit(const std::function<void(const ChakraProtoMsg::Node&)>& sink)
{
    buildNodes();
    addEdges();
    std::vector<uint32_t> topo = order();
    bool dropping = false;
    for (const Node& node : nodes)
        dropping = dropping || !node.kept;
    if (dropping)
        contract(topo);
    et::TraceNode out;
    ChakraProtoMsg::Node message;
    std::vector<uint64_t> deps;
    uint64_t hostNodes = 0;
    for (uint32_t v : topo) {
        const Node& node = nodes[v];
        if (!node.kept) {
            ++summary.hostNodesDropped;
            continue;
        }
        deps.clear();
        for (uint32_t d : node.deps)
            deps.push_back(nodes[d].id);
        std::sort(deps.begin(), deps.end());
        message.Clear();
        if (node.kind == Node::Kind::Host) {
            fillHost(node, message);
            ++hostNodes;
        } else {
            fill(node, out);
            et::TraceCodec::encode(out, message);
            ++summary.nodesByType[et::nodeTypeName(out.type) +
                                  (out.type == et::NodeType::Comp
                                       ? (out.isCpuOp().value_or(false) ? " (CPU)" : " (GPU)")
                                       : "")];
            if (out.type == et::NodeType::CommColl)
                ++summary.collectives[{et::collectiveTypeName(*out.commType()),
                                       std::string(out.pgName().value_or(""))}];
        }
        message.clear_data_deps();
        for (uint64_t d : deps)
            message.add_data_deps(d);
        ++summary.nodes;
        sink(message);
    }
    if (hostNodes > 0)
        summary.nodesByType["COMP_NODE (CPU)"] += hostNodes;
}

} // namespace etsim::importers::pytorch
