// Longer than most files (about 900 lines): every rule of `etsim trace validate` (docs/cli.md's
// finding table) runs in one streaming pass over the rank files and reports into one finding
// list; node, attribute, graph and cross-rank checks share that pass's state.
#include "et_driver/TraceValidator.h"

#include "et_driver/NodeLimits.h"
#include "et_driver/TraceCodec.h"
#include "et_driver/TraceGraph.h"
#include "et_driver/TraceInfo.h"
#include "kernel/Error.h"

#include <algorithm>
#include <set>

namespace etsim::et {

namespace fs = std::filesystem;
namespace pb = ChakraProtoMsg;

const char* findingKindName(FindingKind kind)
{
    switch (kind) {
    case FindingKind::UnreadableTrace:
        return "unreadable-trace";
    case FindingKind::MissingMetadata:
        return "missing-metadata";
    case FindingKind::DuplicateId:
        return "duplicate-id";
    case FindingKind::DanglingDataDep:
        return "dangling-data-dep";
    case FindingKind::DanglingCtrlDep:
        return "dangling-ctrl-dep";
    case FindingKind::DataSelfLoop:
        return "data-self-loop";
    case FindingKind::CtrlSelfLoop:
        return "ctrl-self-loop";
    case FindingKind::DataCycle:
        return "data-cycle";
    case FindingKind::CtrlCycle:
        return "ctrl-cycle";
    case FindingKind::UnknownNodeType:
        return "unknown-node-type";
    case FindingKind::MissingAttribute:
        return "missing-attribute";
    case FindingKind::WrongAttributeType:
        return "wrong-attribute-type";
    case FindingKind::DuplicateAttribute:
        return "duplicate-attribute";
    case FindingKind::UnknownCollective:
        return "unknown-collective";
    case FindingKind::NegativeSize:
        return "negative-size";
    case FindingKind::ZeroSize:
        return "zero-size";
    case FindingKind::MissingPeerOrTag:
        return "missing-peer-or-tag";
    case FindingKind::CommOnCpu:
        return "comm-on-cpu";
    case FindingKind::BadProcessGroupList:
        return "bad-process-group-list";
    case FindingKind::UnknownProcessGroup:
        return "unknown-process-group";
    case FindingKind::CollectiveMismatch:
        return "collective-mismatch";
    case FindingKind::PeerOutOfRange:
        return "peer-out-of-range";
    case FindingKind::BeyondLimits:
        return "beyond-limits";
    }
    return "unknown";
}

const char* severityName(Severity severity)
{
    return severity == Severity::Error ? "error" : "warning";
}

std::string Finding::text() const
{
    std::string out = std::string(severityName(severity)) + ": " + file;
    if (rank)
        out += ": rank " + std::to_string(*rank);
    if (nodeId)
        out += ": node " + std::to_string(*nodeId) + " \"" + nodeName + "\"";
    out += ": " + problem;
    if (!fix.empty())
        out += "; fix: " + fix;
    return out;
}

uint64_t ValidationReport::count(FindingKind kind) const
{
    auto it = counts.find(kind);
    return it == counts.end() ? 0 : it->second;
}

uint64_t ValidationReport::omitted(FindingKind kind) const
{
    uint64_t kept = static_cast<uint64_t>(std::count_if(
        findings.begin(), findings.end(), [kind](const Finding& f) { return f.kind == kind; }));
    return count(kind) - kept;
}

namespace {

bool isComm(NodeType type)
{
    return type == NodeType::CommColl || type == NodeType::CommSend || type == NodeType::CommRecv;
}

// What readers accept for each typed attribute (spec 4.1, 9.5).
enum class ValueClass { Integer, String, BoolList };

ValueClass valueClass(Attr attr)
{
    switch (attr) {
    case Attr::PgName:
    case Attr::OpKind:
    case Attr::Dtype:
        return ValueClass::String;
    case Attr::InvolvedDim:
        return ValueClass::BoolList;
    default:
        return ValueClass::Integer;
    }
}

const char* canonicalEncoding(Attr attr)
{
    switch (attr) {
    case Attr::IsCpuOp:
        return "bool_val";
    case Attr::TensorSize:
        return "uint64_val";
    case Attr::CommSrc:
    case Attr::CommDst:
    case Attr::CommTag:
    case Attr::CommPriority:
        return "int32_val";
    case Attr::PgName:
    case Attr::OpKind:
    case Attr::Dtype:
        return "string_val";
    case Attr::InvolvedDim:
        return "bool_list";
    default:
        return "int64_val";
    }
}

const char* rangeText(Attr attr)
{
    switch (attr) {
    case Attr::IsCpuOp:
        return "false/true (0 or 1)";
    case Attr::TensorSize:
        return "0 .. 2^64-1";
    case Attr::CommType:
    case Attr::CommSrc:
    case Attr::CommDst:
    case Attr::CommTag:
    case Attr::CommPriority:
        return "the int32 range";
    default:
        return "the int64 range";
    }
}

bool isIntegerCase(pb::AttributeProto::ValueCase value)
{
    using Case = pb::AttributeProto::ValueCase;
    switch (value) {
    case Case::kInt32Val:
    case Case::kInt64Val:
    case Case::kUint32Val:
    case Case::kUint64Val:
    case Case::kSint32Val:
    case Case::kSint64Val:
    case Case::kFixed32Val:
    case Case::kFixed64Val:
    case Case::kSfixed32Val:
    case Case::kSfixed64Val:
    case Case::kBoolVal:
        return true;
    default:
        return false;
    }
}

std::string valueCaseName(const pb::AttributeProto& attr)
{
    if (attr.value_case() == pb::AttributeProto::VALUE_NOT_SET)
        return "no value";
    const google::protobuf::FieldDescriptor* field =
        pb::AttributeProto::descriptor()->FindFieldByNumber(static_cast<int>(attr.value_case()));
    return field != nullptr ? field->name() : "field " + std::to_string(attr.value_case());
}

std::string collectiveText(int32_t type, std::optional<int64_t> bytes)
{
    std::string out =
        type < 0 ? std::string("a collective without comm_type") : collectiveTypeName(type);
    out += bytes ? " of " + std::to_string(*bytes) + " B" : " without comm_size";
    return out;
}

std::string groupText(const std::string& pg)
{
    return pg.empty() ? "the default group (all ranks)" : "group " + pg;
}

// One collective of a rank, kept for the cross-rank comparison.
struct Collective {
    uint64_t id = 0;
    int32_t type = -1; // -1: no comm_type
    std::optional<int64_t> bytes;
    std::string group; // pg_name; "" for the default group ("0" included)
    std::string name;
};

struct RankCollectives {
    bool usable = false;
    std::vector<Collective> list;
};

// A graph finding, formatted once the names of its nodes are known.
struct PendingGraphFinding {
    FindingKind kind;
    Severity severity;
    std::vector<uint32_t> nodes; // subject first; for cycles, the cycle in order
    uint64_t missingId = 0;      // dangling: the absent id
    uint32_t componentSize = 0;  // cycles: size of the strongly connected group
};

} // namespace

class TraceValidator::Run {
public:
    Run(const ValidatorOptions& options, uint32_t rankCount)
        : options(options), rankCollectives(rankCount)
    {
        report.ranks = rankCount;
        for (const ProcessGroup& group : options.commGroups)
            externalGroups.insert(group.id);
    }

    // Checks one rank file. `reader` may be null: the file is then opened here.
    void checkRank(std::optional<uint32_t> rank, const fs::path& file, TraceReader* reader);
    void compareCollectives(const std::vector<std::vector<ProcessGroup>>& declared);
    ValidationReport take() { return std::move(report); }

    // Per rank of a set: the groups its METADATA_NODEs define, and its file name.
    std::vector<std::vector<ProcessGroup>> metadataGroups;
    std::vector<std::string> files;

private:
    bool count(FindingKind kind, Severity severity)
    {
        uint64_t& n = report.counts[kind];
        ++n;
        ++(severity == Severity::Error ? report.errors : report.warnings);
        return n <= options.maxPerKind;
    }
    void add(FindingKind kind,
             Severity severity,
             const TraceNode* node,
             std::string problem,
             std::string fix)
    {
        if (!count(kind, severity))
            return;
        Finding finding;
        finding.severity = severity;
        finding.kind = kind;
        finding.file = currentFile;
        finding.rank = currentRank;
        if (node != nullptr) {
            finding.nodeId = node->id;
            finding.nodeName = node->name;
        }
        finding.problem = std::move(problem);
        finding.fix = std::move(fix);
        report.findings.push_back(std::move(finding));
    }

    void checkNode(const TraceNode& node);
    void checkAttributes(const TraceNode& node, uint32_t& wrongMask);
    void checkGraph(TraceGraph& graph, const fs::path& file);
    void emitGraphFindings(const TraceGraph& graph,
                           const std::vector<PendingGraphFinding>& pending,
                           const fs::path& file);

    const ValidatorOptions& options;
    ValidationReport report;
    std::set<int64_t> externalGroups;
    std::vector<RankCollectives> rankCollectives;

    // State of the rank being checked.
    std::string currentFile;
    std::optional<uint32_t> currentRank;
    std::set<int64_t> rankGroups;
    std::vector<ProcessGroup> rankGroupList;
    struct GroupUse {
        uint64_t id;
        std::string name;
        std::string pg;
    };
    std::vector<GroupUse> groupUses;
    std::vector<Collective>* collectives = nullptr;
};

void TraceValidator::Run::checkRank(std::optional<uint32_t> rank,
                                    const fs::path& file,
                                    TraceReader* reader)
{
    currentFile = file.string();
    currentRank = rank;
    rankGroups.clear();
    rankGroupList.clear();
    groupUses.clear();
    RankCollectives* mine =
        rank && *rank < rankCollectives.size() ? &rankCollectives[*rank] : nullptr;
    std::vector<Collective> scratch;
    collectives = mine != nullptr ? &mine->list : &scratch;

    TraceGraph graph;
    std::optional<TraceReader> own;
    try {
        if (reader == nullptr) {
            own.emplace(file);
            reader = &*own;
        }
        if (!reader->metadata().present)
            add(FindingKind::MissingMetadata,
                Severity::Warning,
                nullptr,
                "record 0 is a Node, not the GlobalMetadata record (a legacy trace, spec 3.2); "
                "ASTRA-sim's feeder rejects such files",
                "rewrite it with `etsim trace convert`, which writes a GlobalMetadata record");
        TraceNode node;
        while (reader->next(node)) {
            graph.addNode(node.id, node.dataDeps, node.ctrlDeps, !options.dataOnly);
            checkNode(node);
            ++report.nodes;
        }
    } catch (const Error& error) {
        // A file that cannot be read to the end has no meaningful graph: report only this.
        add(FindingKind::UnreadableTrace,
            Severity::Error,
            nullptr,
            error.what(),
            "regenerate or re-copy the file");
        return;
    }

    std::set<int64_t> known = externalGroups;
    known.insert(rankGroups.begin(), rankGroups.end());
    for (const GroupUse& use : groupUses) {
        std::optional<int64_t> id = groupId(use.pg);
        std::string problem;
        if (!id)
            problem = "pg_name \"" + use.pg + "\" is not a decimal communicator-group id";
        else if (known.count(*id) != 0)
            continue;
        else if (known.empty())
            problem = "pg_name \"" + use.pg + "\" names communicator group " + std::to_string(*id) +
                      ", but no group is defined: the file has no process-group METADATA_NODE "
                      "and no communicator-group file was given; ASTRA-sim exits on this node";
        else
            problem = "pg_name \"" + use.pg + "\" names communicator group " + std::to_string(*id) +
                      ", which neither a METADATA_NODE of this file nor the communicator-group "
                      "file defines; ASTRA-sim exits on this node";
        // Only the id and name of the node are kept by now; the finding needs no more.
        TraceNode named;
        named.id = use.id;
        named.name = use.name;
        add(FindingKind::UnknownProcessGroup,
            Severity::Error,
            &named,
            problem,
            "define the group (a process-group METADATA_NODE, spec 6, or --comm-groups FILE), "
            "or set pg_name to \"\" for all ranks");
    }
    if (mine != nullptr) {
        mine->usable = true;
        std::sort(mine->list.begin(),
                  mine->list.end(),
                  [](const Collective& a, const Collective& b) { return a.id < b.id; });
    }
    if (rank && *rank < metadataGroups.size())
        metadataGroups[*rank] = rankGroupList;
    checkGraph(graph, file);
}

void TraceValidator::Run::checkNode(const TraceNode& node)
{
    auto typeNumber = static_cast<int32_t>(node.type);
    if (typeNumber < static_cast<int32_t>(NodeType::Invalid) ||
        typeNumber > static_cast<int32_t>(NodeType::CommColl)) {
        add(FindingKind::UnknownNodeType,
            Severity::Error,
            &node,
            "type " + std::to_string(typeNumber) + " is not a Chakra node type",
            "use one of INVALID_NODE (0) .. COMM_COLL_NODE (7) (spec 2.5); ASTRA-sim exits on "
            "unknown types");
        return;
    }

    uint32_t wrongMask = 0;
    if (node.otherAttributeCount() > 0)
        checkAttributes(node, wrongMask);
    auto present = [&](Attr attr) {
        return node.has(attr) || ((wrongMask >> static_cast<unsigned>(attr)) & 1U) != 0;
    };
    auto typeName = nodeTypeName(node.type);
    auto require = [&](Attr attr, FindingKind kind) {
        if (present(attr))
            return;
        add(kind,
            Severity::Error,
            &node,
            typeName + " without " + std::string(attrName(attr)),
            "add a " + std::string(attrName(attr)) + " attribute (" + canonicalEncoding(attr) +
                "); it is required for this node type (spec 4.3)");
    };

    switch (node.type) {
    case NodeType::CommColl:
        require(Attr::CommType, FindingKind::MissingAttribute);
        require(Attr::CommSize, FindingKind::MissingAttribute);
        break;
    case NodeType::CommSend:
        require(Attr::CommDst, FindingKind::MissingPeerOrTag);
        require(Attr::CommTag, FindingKind::MissingPeerOrTag);
        require(Attr::CommSize, FindingKind::MissingAttribute);
        break;
    case NodeType::CommRecv:
        require(Attr::CommSrc, FindingKind::MissingPeerOrTag);
        require(Attr::CommTag, FindingKind::MissingPeerOrTag);
        require(Attr::CommSize, FindingKind::MissingAttribute);
        break;
    case NodeType::MemLoad:
    case NodeType::MemStore:
        require(Attr::TensorSize, FindingKind::MissingAttribute);
        if (node.tensorSize() == std::optional<uint64_t>(0))
            add(FindingKind::ZeroSize,
                Severity::Warning,
                &node,
                "tensor_size is 0: the memory access moves nothing",
                "set tensor_size to the bytes loaded or stored, or remove the node");
        break;
    default:
        break;
    }

    if (isComm(node.type) && node.isCpuOp() == std::optional<bool>(true))
        add(FindingKind::CommOnCpu,
            Severity::Error,
            &node,
            typeName + " with is_cpu_op true: ASTRA-sim throws \"Comm node should not be on CPU\"",
            "set is_cpu_op to false, or type host-side wrappers (c10d::*) COMP_NODE");

    std::optional<int32_t> commType = node.commType();
    if (node.type == NodeType::CommColl && commType &&
        (*commType < 0 || *commType > static_cast<int32_t>(CollectiveType::Barrier)))
        add(FindingKind::UnknownCollective,
            Severity::Error,
            &node,
            "comm_type " + std::to_string(*commType) + " is not a CollectiveCommType",
            "use ALL_REDUCE (0) .. BARRIER (9) (spec 2.5)");

    if (std::optional<int64_t> bytes = node.commSize();
        bytes && isComm(node.type) && *bytes == 0 && commType != std::optional<int32_t>(9))
        add(FindingKind::ZeroSize,
            Severity::Warning,
            &node,
            "comm_size is 0 B: the communication moves nothing",
            "check the producer (a uint64/int64 mix-up reads as 0, ASTRA-sim issue #224)");
    // The rules a run applies before it lowers a node (NodeLimits.h), so that validate passes
    // exactly the traces a run accepts. Peers are checked when the rank count is known.
    const std::size_t rankCount = rankCollectives.size();
    for (LimitViolation& violation : checkNodeLimits(node, rankCount, currentRank.value_or(0))) {
        const FindingKind kind =
            violation.limit == NodeLimit::PeerRank        ? FindingKind::PeerOutOfRange
            : violation.limit == NodeLimit::NegativeValue ? FindingKind::NegativeSize
                                                          : FindingKind::BeyondLimits;
        add(kind, Severity::Error, &node, violation.problem, violation.fix);
    }

    if (node.type == NodeType::Metadata) {
        std::optional<pb::IOInfo> inputs = TraceCodec::inputs(node);
        if (inputs && !inputs->values().empty()) {
            try {
                for (ProcessGroup& group : parsePytorchProcessGroups(inputs->values())) {
                    rankGroups.insert(group.id);
                    rankGroupList.push_back(std::move(group));
                }
            } catch (const Error& error) {
                add(FindingKind::BadProcessGroupList,
                    Severity::Warning,
                    &node,
                    error.what(),
                    "write the process-group list as the PyTorch converter does (spec 6); "
                    "ASTRA-sim ignores a list it cannot parse");
            }
        }
    }

    if (node.type == NodeType::CommColl) {
        std::string pg(node.pgName().value_or(""));
        if (!isDefaultGroup(pg))
            groupUses.push_back({node.id, node.name, pg});
        Collective c;
        c.id = node.id;
        c.type = commType.value_or(-1);
        c.bytes = node.commSize();
        c.group = isDefaultGroup(pg) ? std::string() : pg;
        c.name = node.name;
        collectives->push_back(std::move(c));
    }
}

void TraceValidator::Run::checkAttributes(const TraceNode& node, uint32_t& wrongMask)
{
    for (const pb::AttributeProto& attr : TraceCodec::otherAttributes(node)) {
        std::optional<Attr> known = attrFromName(attr.name());
        if (!known)
            continue;
        std::string name(attr.name());
        if (node.has(*known)) {
            add(FindingKind::DuplicateAttribute,
                Severity::Warning,
                &node,
                "attribute " + name +
                    " appears more than once; feeder v3 uses the first, the "
                    "legacy feeder the last",
                "write each attribute once (spec 2.7)");
            continue;
        }
        ValueClass wanted = valueClass(*known);
        bool caseOk =
            (wanted == ValueClass::Integer && isIntegerCase(attr.value_case())) ||
            (wanted == ValueClass::String && attr.value_case() == pb::AttributeProto::kStringVal) ||
            (wanted == ValueClass::BoolList && attr.value_case() == pb::AttributeProto::kBoolList);
        if (caseOk && !attr.doc_string().empty())
            continue; // kept aside only because of its doc_string; readers take it as it is
        wrongMask |= 1U << static_cast<unsigned>(*known);
        if (!caseOk) {
            std::string expected = wanted == ValueClass::Integer
                                       ? std::string("an integer or bool value")
                                       : std::string(canonicalEncoding(*known));
            add(FindingKind::WrongAttributeType,
                Severity::Error,
                &node,
                "attribute " + name + " is " + valueCaseName(attr) + "; readers expect " + expected,
                "write it as " + std::string(canonicalEncoding(*known)) + " (spec 4.1)");
        } else if (wanted == ValueClass::BoolList) {
            add(FindingKind::WrongAttributeType,
                Severity::Error,
                &node,
                "attribute " + name + " has " + std::to_string(attr.bool_list().values_size()) +
                    " entries; at most 32 network dimensions are supported",
                "list one entry per network dimension");
        } else {
            add(FindingKind::WrongAttributeType,
                Severity::Error,
                &node,
                "attribute " + name + " (" + valueCaseName(attr) + ") holds a value outside " +
                    rangeText(*known),
                "write a value in " + std::string(rangeText(*known)) + " as " +
                    canonicalEncoding(*known));
        }
    }
}

void TraceValidator::Run::checkGraph(TraceGraph& graph, const fs::path& file)
{
    graph.resolve();
    std::vector<PendingGraphFinding> pending;
    auto keep = [&](FindingKind kind, Severity severity, PendingGraphFinding finding) {
        if (!count(kind, severity))
            return;
        finding.kind = kind;
        finding.severity = severity;
        pending.push_back(std::move(finding));
    };

    for (const TraceGraph::Duplicate& d : graph.duplicates())
        keep(FindingKind::DuplicateId, Severity::Error, {{}, {}, {d.second, d.first}, 0, 0});
    Severity danglingData = options.lenient ? Severity::Warning : Severity::Error;
    // A run that honours control dependencies (the default, data+ctrl) never starts a node on
    // a control cycle and ends as a deadlock: an error, as for data cycles (a self-loop, which
    // the run drops with a warning, stays a warning). --data-only (the run's
    // `driver.dependencies: data`) ignores control edges and checks none of this.
    const Severity ctrlCycleSeverity = Severity::Error;
    for (const TraceGraph::Dangling& d : graph.dangling()) {
        if (d.kind == EdgeKind::Data)
            keep(FindingKind::DanglingDataDep, danglingData, {{}, {}, {d.node}, d.missingId, 0});
        else
            keep(FindingKind::DanglingCtrlDep,
                 Severity::Warning,
                 {{}, {}, {d.node}, d.missingId, 0});
    }
    for (const TraceGraph::SelfLoop& s : graph.selfLoops()) {
        if (s.kind == EdgeKind::Data)
            keep(FindingKind::DataSelfLoop, Severity::Error, {{}, {}, {s.node}, 0, 0});
        else
            keep(FindingKind::CtrlSelfLoop, Severity::Warning, {{}, {}, {s.node}, 0, 0});
    }

    // Cycles: strongly connected groups, one example cycle each. Data cycles first; then the
    // groups that exist only because of control edges.
    EdgeMask dataOnly{true, false};
    std::vector<TraceGraph::Component> dataComponents = graph.cyclicComponents(dataOnly);
    std::vector<uint32_t> dataComponentSize(graph.size(), 0);
    for (const TraceGraph::Component& c : dataComponents) {
        for (uint32_t node : c)
            dataComponentSize[node] = static_cast<uint32_t>(c.size());
        if (!count(FindingKind::DataCycle, Severity::Error))
            continue;
        uint32_t from = c.front();
        uint32_t to = TraceGraph::none;
        for (const uint32_t* d = graph.depsBegin(from, EdgeKind::Data);
             d != graph.depsEnd(from, EdgeKind::Data) && to == TraceGraph::none;
             ++d)
            if (std::binary_search(c.begin(), c.end(), *d))
                to = *d;
        pending.push_back({FindingKind::DataCycle,
                           Severity::Error,
                           graph.cycleThrough(c, from, to, dataOnly),
                           0,
                           static_cast<uint32_t>(c.size())});
    }
    if (!options.dataOnly && graph.edgeCount(EdgeKind::Ctrl) > 0) {
        EdgeMask both{true, true};
        for (const TraceGraph::Component& c : graph.cyclicComponents(both)) {
            // The same node set as a data cycle group: already reported.
            if (dataComponentSize[c.front()] == c.size())
                continue;
            if (!count(FindingKind::CtrlCycle, ctrlCycleSeverity))
                continue;
            uint32_t from = TraceGraph::none;
            uint32_t to = TraceGraph::none;
            for (uint32_t node : c) {
                for (const uint32_t* d = graph.depsBegin(node, EdgeKind::Ctrl);
                     d != graph.depsEnd(node, EdgeKind::Ctrl);
                     ++d)
                    if (std::binary_search(c.begin(), c.end(), *d)) {
                        from = node;
                        to = *d;
                        break;
                    }
                if (from != TraceGraph::none)
                    break;
            }
            pending.push_back({FindingKind::CtrlCycle,
                               ctrlCycleSeverity,
                               graph.cycleThrough(c, from, to, both),
                               0,
                               static_cast<uint32_t>(c.size())});
        }
    }
    if (!pending.empty())
        emitGraphFindings(graph, pending, file);
}

void TraceValidator::Run::emitGraphFindings(const TraceGraph& graph,
                                            const std::vector<PendingGraphFinding>& pending,
                                            const fs::path& file)
{
    // Cycles are printed with at most this many nodes; the count says how long they are.
    constexpr std::size_t shownCycleNodes = 12;
    std::vector<uint32_t> wanted;
    for (const PendingGraphFinding& p : pending)
        for (std::size_t i = 0; i < p.nodes.size() && i < shownCycleNodes; ++i)
            wanted.push_back(p.nodes[i]);
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());

    // Second pass over the file for the names of the reported nodes only.
    std::vector<std::string> names(wanted.size());
    try {
        TraceReader reader(file);
        TraceNode node;
        std::size_t next = 0;
        for (uint32_t index = 0; next < wanted.size() && reader.next(node); ++index)
            if (wanted[next] == index)
                names[next++] = node.name;
    } catch (const Error&) {
        // The first pass read the whole file; names stay empty if it changed since.
    }
    auto nameOf = [&](uint32_t node) -> const std::string& {
        auto it = std::lower_bound(wanted.begin(), wanted.end(), node);
        return names[static_cast<std::size_t>(it - wanted.begin())];
    };
    auto label = [&](uint32_t node) {
        return std::to_string(graph.id(node)) + " \"" + nameOf(node) + "\"";
    };

    for (const PendingGraphFinding& p : pending) {
        Finding f;
        f.severity = p.severity;
        f.kind = p.kind;
        f.file = currentFile;
        f.rank = currentRank;
        uint32_t subject = p.nodes.front();
        f.nodeId = graph.id(subject);
        f.nodeName = nameOf(subject);
        switch (p.kind) {
        case FindingKind::DuplicateId:
            f.problem = "record " + std::to_string(subject) + " reuses the id of record " +
                        std::to_string(p.nodes[1]) + " \"" + nameOf(p.nodes[1]) + "\"";
            f.fix = "give every node of a file its own id (spec 1.4); dependencies on this id "
                    "resolve to the first record";
            break;
        case FindingKind::DanglingDataDep:
            f.problem = "data dependency on node " + std::to_string(p.missingId) +
                        ", which is not in the file: the node can never start";
            f.fix = "add node " + std::to_string(p.missingId) +
                    " or remove the dependency (--lenient reports it as a warning)";
            break;
        case FindingKind::DanglingCtrlDep:
            f.problem = "control dependency on node " + std::to_string(p.missingId) +
                        ", which is not in the file";
            f.fix = "converters store the caller here (spec 7.1); remove it if a data+ctrl "
                    "policy is used (ASTRA-sim's feeder rejects the file), or validate with "
                    "--data-only";
            break;
        case FindingKind::DataSelfLoop:
            f.problem = "the node lists itself in data_deps: it can never start";
            f.fix = "remove the node's own id from data_deps";
            break;
        case FindingKind::CtrlSelfLoop:
            f.problem = "the node lists itself in ctrl_deps";
            f.fix = "remove the node's own id from ctrl_deps (harmless under the data policy)";
            break;
        case FindingKind::DataCycle:
        case FindingKind::CtrlCycle: {
            std::string chain;
            for (std::size_t i = 0; i < p.nodes.size() && i < shownCycleNodes; ++i)
                chain += (i == 0 ? "" : " -> ") + label(p.nodes[i]);
            if (p.nodes.size() > shownCycleNodes)
                chain += " -> ... (" + std::to_string(p.nodes.size() - shownCycleNodes) + " more)";
            chain += " -> " + std::to_string(graph.id(subject));
            bool data = p.kind == FindingKind::DataCycle;
            f.problem = std::string(data ? "data" : "control") + " dependency cycle of " +
                        std::to_string(p.nodes.size()) +
                        " nodes (each waits for the next): " + chain;
            if (p.componentSize > p.nodes.size())
                f.problem +=
                    "; " + std::to_string(p.componentSize) + " nodes are mutually dependent in all";
            f.fix = data ? "break the cycle by removing one of its data dependencies"
                         : "break the cycle in ctrl_deps, or ignore control edges: validate "
                           "with --data-only and run with --set driver.dependencies=data";
            break;
        }
        default:
            break;
        }
        report.findings.push_back(std::move(f));
    }
}

void TraceValidator::Run::compareCollectives(const std::vector<std::vector<ProcessGroup>>& declared)
{
    auto rankCount = static_cast<uint32_t>(rankCollectives.size());
    // Members of each group used anywhere: declared lists first (the group file, then the
    // lowest rank's METADATA_NODE), else the ranks that use the group.
    std::map<std::string, std::vector<uint32_t>> members;
    std::map<std::string, bool> isDeclared;
    for (uint32_t rank = 0; rank < rankCount; ++rank)
        for (const Collective& c : rankCollectives[rank].list)
            members[c.group];
    auto declare = [&](const std::string& group, const std::vector<int64_t>& ranks) {
        if (isDeclared[group])
            return;
        isDeclared[group] = true;
        std::vector<uint32_t>& list = members[group];
        list.clear();
        if (ranks.empty()) {
            for (uint32_t r = 0; r < rankCount; ++r)
                list.push_back(r);
            return;
        }
        for (int64_t r : ranks)
            if (r >= 0 && r < rankCount)
                list.push_back(static_cast<uint32_t>(r));
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
    };
    for (auto& [group, list] : members) {
        if (group.empty()) {
            declare(group, {});
            continue;
        }
        std::optional<int64_t> id = groupId(group);
        for (const ProcessGroup& g : options.commGroups)
            if (id && g.id == *id)
                declare(group, g.ranks);
        for (uint32_t rank = 0; rank < rankCount && !isDeclared[group]; ++rank)
            for (const ProcessGroup& g : declared[rank])
                if (id && g.id == *id)
                    declare(group, g.ranks);
        if (!isDeclared[group])
            for (uint32_t rank = 0; rank < rankCount; ++rank)
                for (const Collective& c : rankCollectives[rank].list)
                    if (c.group == group && (list.empty() || list.back() != rank))
                        list.push_back(rank);
    }

    for (const auto& [group, list] : members) {
        std::vector<std::vector<const Collective*>> sequences(rankCount);
        std::vector<uint32_t> usable;
        for (uint32_t rank : list) {
            if (!rankCollectives[rank].usable)
                continue;
            usable.push_back(rank);
            for (const Collective& c : rankCollectives[rank].list)
                if (c.group == group)
                    sequences[rank].push_back(&c);
        }
        if (usable.size() < 2)
            continue;
        uint32_t reference = usable.front();
        const std::vector<const Collective*>& ref = sequences[reference];
        for (std::size_t k = 1; k < usable.size(); ++k) {
            uint32_t rank = usable[k];
            const std::vector<const Collective*>& seq = sequences[rank];
            std::size_t i = 0;
            while (i < ref.size() && i < seq.size() && ref[i]->type == seq[i]->type &&
                   ref[i]->bytes == seq[i]->bytes)
                ++i;
            if (i == ref.size() && i == seq.size())
                continue;
            if (!count(FindingKind::CollectiveMismatch, Severity::Warning))
                continue;
            Finding f;
            f.severity = Severity::Warning;
            f.kind = FindingKind::CollectiveMismatch;
            f.file = files[rank];
            f.rank = rank;
            std::string refRank = "rank " + std::to_string(reference);
            auto refText = [&](std::size_t at) {
                return collectiveText(ref[at]->type, ref[at]->bytes) + " (node " +
                       std::to_string(ref[at]->id) + " \"" + ref[at]->name + "\")";
            };
            if (i < ref.size() && i < seq.size()) {
                f.nodeId = seq[i]->id;
                f.nodeName = seq[i]->name;
                f.problem = "collective #" + std::to_string(i + 1) + " in " + groupText(group) +
                            " is " + collectiveText(seq[i]->type, seq[i]->bytes) + ", but " +
                            refRank + "'s #" + std::to_string(i + 1) + " is " + refText(i);
            } else if (i < ref.size()) {
                f.problem = "issues " + std::to_string(seq.size()) + " collectives in " +
                            groupText(group) + ", " + refRank + " issues " +
                            std::to_string(ref.size()) + "; the first missing one is " + refRank +
                            "'s #" + std::to_string(i + 1) + ", " + refText(i);
            } else {
                f.nodeId = seq[i]->id;
                f.nodeName = seq[i]->name;
                f.problem = "issues " + std::to_string(seq.size()) + " collectives in " +
                            groupText(group) + ", " + refRank + " issues " +
                            std::to_string(ref.size()) + "; the first extra one is #" +
                            std::to_string(i + 1) + ", " +
                            collectiveText(seq[i]->type, seq[i]->bytes);
            }
            f.fix = "every member of a group must issue the same collectives with the same "
                    "sizes in the same order (spec 8.5; compared here in node-id order), or the "
                    "run hangs; regenerate or fix this rank's trace";
            report.findings.push_back(std::move(f));
        }
    }
}

TraceValidator::TraceValidator(ValidatorOptions options) : options(std::move(options)) {}

ValidationReport TraceValidator::validate(const fs::path& fileOrPrefix)
{
    std::error_code error;
    if (fs::is_regular_file(fileOrPrefix, error))
        return validateFile(fileOrPrefix);
    TraceSet set(fileOrPrefix);
    return validateSet(set);
}

ValidationReport TraceValidator::validateFile(const fs::path& file)
{
    Run run(options, 0);
    run.checkRank(rankFromFileName(file), file, nullptr);
    ValidationReport report = run.take();
    report.ranks = 1;
    return report;
}

ValidationReport TraceValidator::validateSet(TraceSet& set)
{
    auto rankCount = static_cast<uint32_t>(set.rankCount());
    Run run(options, rankCount);
    run.metadataGroups.assign(rankCount, {});
    run.files.resize(rankCount);
    for (uint32_t rank = 0; rank < rankCount; ++rank) {
        run.files[rank] = set.path(rank).string();
        TraceReader* reader = nullptr;
        try {
            reader = &set.reader(rank);
        } catch (const Error&) {
            // checkRank opens the file itself and reports why it cannot be read.
        }
        run.checkRank(rank, set.path(rank), reader);
        if (reader != nullptr)
            reader->suspend();
    }
    if (rankCount > 1)
        run.compareCollectives(run.metadataGroups);
    return run.take();
}

} // namespace etsim::et
