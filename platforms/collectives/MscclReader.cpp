#include "platforms/collectives/MscclReader.h"

#include "kernel/Error.h"

#include <algorithm>
#include <fstream>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

namespace etsim::platform {

namespace {

using net::ChunkRef;
using net::CollectiveProgram;
using net::ProgramBuffer;
using net::ProgramOp;
using net::ProgramOpKind;

struct DocFree {
    void operator()(xmlDoc* doc) const { xmlFreeDoc(doc); }
};
struct ContextFree {
    void operator()(xmlParserCtxt* context) const { xmlFreeParserCtxt(context); }
};

std::string name(const xmlNode* node)
{
    return reinterpret_cast<const char*>(node->name);
}

// One element being read: knows its file and line, and which attributes were used.
class Element {
public:
    Element(const std::string& fileName, const xmlNode* node) : file(fileName), node(node) {}

    [[noreturn]] void fail(const std::string& problem) const
    {
        throw Error(file + ":" + std::to_string(xmlGetLineNo(node)) + ": <" + name(node) +
                    ">: " + problem);
    }
    long line() const { return xmlGetLineNo(node); }

    bool has(const char* attribute) const
    {
        return xmlHasProp(node, reinterpret_cast<const xmlChar*>(attribute)) != nullptr;
    }
    std::string text(const char* attribute) const
    {
        // The attribute's text node is read in place: xmlGetProp would copy every value of
        // millions of steps.
        const xmlAttr* attr = xmlHasProp(node, reinterpret_cast<const xmlChar*>(attribute));
        if (!attr)
            fail(std::string("needs the attribute ") + attribute);
        const xmlNode* value = attr->children;
        if (value && !value->next && value->type == XML_TEXT_NODE && value->content)
            return reinterpret_cast<const char*>(value->content);
        xmlChar* joined = xmlNodeListGetString(node->doc, attr->children, 1);
        std::string out(joined ? reinterpret_cast<const char*>(joined) : "");
        xmlFree(joined);
        return out;
    }
    std::int64_t integer(const char* attribute, std::int64_t low, std::int64_t high) const
    {
        std::string value = text(attribute);
        std::size_t used = 0;
        std::int64_t number = 0;
        try {
            number = std::stoll(value, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used == 0 || used != value.size())
            fail(std::string(attribute) + "=\"" + value + "\" is not an integer");
        if (number < low || number > high)
            fail(std::string(attribute) + "=" + value + " is out of range (" + std::to_string(low) +
                 " to " + std::to_string(high) + ")");
        return number;
    }
    std::int64_t
    integer(const char* attribute, std::int64_t low, std::int64_t high, std::int64_t fallback) const
    {
        return has(attribute) ? integer(attribute, low, high) : fallback;
    }
    /// Refuses attributes outside `known` (compared in place: this runs for every step).
    void only(std::initializer_list<std::string_view> known) const
    {
        for (const xmlAttr* attr = node->properties; attr; attr = attr->next) {
            std::string_view key = reinterpret_cast<const char*>(attr->name);
            if (std::find(known.begin(), known.end(), key) == known.end())
                fail("the attribute " + std::string(key) + " is not modelled (known: " +
                     join(std::set<std::string>(known.begin(), known.end())) + ")");
        }
    }
    /// Child elements; text and comments are skipped, other elements than `child` refused.
    std::vector<const xmlNode*> children(const char* child) const
    {
        std::vector<const xmlNode*> out;
        for (const xmlNode* sub = node->children; sub; sub = sub->next) {
            if (sub->type != XML_ELEMENT_NODE)
                continue;
            if (name(sub) != child)
                Element(file, sub).fail(std::string("unexpected element inside <") + name(node) +
                                        "> (expected <" + child + ">)");
            out.push_back(sub);
        }
        return out;
    }

private:
    static std::string join(const std::set<std::string>& names)
    {
        std::string out;
        for (const std::string& key : names)
            out += (out.empty() ? "" : ", ") + key;
        return out;
    }

    const std::string& file;
    const xmlNode* node;
};

CollectiveType collectiveOf(const Element& algo)
{
    std::string coll = algo.text("coll");
    if (std::optional<CollectiveType> type = net::collectiveFromMscclName(coll))
        return *type;
    algo.fail("coll=\"" + coll +
              "\" is not modelled (allreduce, allgather, reduce_scatter or alltoall)");
}

ProgramOpKind kindOf(const Element& step)
{
    std::string type = step.text("type");
    if (std::optional<ProgramOpKind> kind = net::opKindFromMscclName(type))
        return *kind;
    step.fail("unknown step type \"" + type + "\" (s, r, rrc, rrs, rcs, rrcs, cpy, re, nop)");
}

ProgramBuffer bufferOf(const Element& step, const char* attribute)
{
    std::string value = step.text(attribute);
    if (std::optional<ProgramBuffer> buffer = net::bufferFromMscclName(value))
        return *buffer;
    step.fail(std::string(attribute) + "=\"" + value + "\" is not a buffer (i, o or s)");
}

constexpr std::int64_t maxCount = 1 << 24;

// One GPU: its threadblocks' steps become operations; dependencies are resolved after all
// threadblocks are read (depid may name a later one).
void readGpu(const std::string& file,
             const Element& gpu,
             std::uint32_t rank,
             CollectiveProgram& program)
{
    auto& ops = program.ranks[rank].ops;
    std::uint32_t ranks = program.rankCount();
    // (threadblock id, step) -> operation; the pending depid/deps of each operation.
    std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> byStep;
    struct Pending {
        std::uint32_t op;
        std::int64_t tb;
        std::int64_t step;
        long line;
    };
    std::vector<Pending> pending;
    std::set<std::int64_t> tbIds;
    std::set<std::pair<std::int64_t, std::int64_t>> sendConnections, recvConnections;
    for (const xmlNode* tbNode : gpu.children("tb")) {
        Element tb(file, tbNode);
        tb.only({"id", "send", "recv", "chan"});
        std::int64_t id = tb.integer("id", 0, maxCount);
        if (!tbIds.insert(id).second)
            tb.fail("threadblock id " + std::to_string(id) + " appears twice in gpu " +
                    std::to_string(rank));
        std::int64_t sendPeer = tb.integer("send", -1, ranks - 1);
        std::int64_t recvPeer = tb.integer("recv", -1, ranks - 1);
        std::int64_t channel = tb.integer("chan", 0, maxCount, 0);
        if (sendPeer >= 0 && !sendConnections.insert({sendPeer, channel}).second)
            tb.fail("a second threadblock of gpu " + std::to_string(rank) + " sends to gpu " +
                    std::to_string(sendPeer) + " on channel " + std::to_string(channel) +
                    " (the order of their messages would be undefined; use another channel)");
        if (recvPeer >= 0 && !recvConnections.insert({recvPeer, channel}).second)
            tb.fail("a second threadblock of gpu " + std::to_string(rank) + " receives from gpu " +
                    std::to_string(recvPeer) + " on channel " + std::to_string(channel) +
                    " (use another channel)");
        std::int64_t expected = 0;
        for (const xmlNode* stepNode : tb.children("step")) {
            Element step(file, stepNode);
            step.only({"s",
                       "type",
                       "srcbuf",
                       "srcoff",
                       "dstbuf",
                       "dstoff",
                       "cnt",
                       "depid",
                       "deps",
                       "hasdep"});
            std::int64_t index = step.integer("s", 0, maxCount);
            if (index != expected)
                step.fail("s=" + std::to_string(index) +
                          " but the threadblock's steps must be "
                          "numbered 0, 1, 2, ... in order (expected " +
                          std::to_string(expected) + ")");
            ++expected;
            ProgramOp op;
            op.kind = kindOf(step);
            op.where = file + ":" + std::to_string(step.line()) + " (gpu " + std::to_string(rank) +
                       " tb " + std::to_string(id) + " step " + std::to_string(index) + " " +
                       net::mscclName(op.kind) + ")";
            op.channel = static_cast<std::uint32_t>(channel);
            op.threadblock = static_cast<std::uint32_t>(id);
            if (net::sends(op.kind)) {
                if (sendPeer < 0)
                    step.fail(std::string("step type ") + net::mscclName(op.kind) +
                              " sends, but its threadblock has send=\"-1\"");
                op.sendPeer = static_cast<std::uint32_t>(sendPeer);
            }
            if (net::receives(op.kind)) {
                if (recvPeer < 0)
                    step.fail(std::string("step type ") + net::mscclName(op.kind) +
                              " receives, but its threadblock has recv=\"-1\"");
                op.recvPeer = static_cast<std::uint32_t>(recvPeer);
            }
            if (op.kind != ProgramOpKind::Nop) {
                op.src = ChunkRef{bufferOf(step, "srcbuf"),
                                  static_cast<std::uint32_t>(step.integer("srcoff", 0, maxCount))};
                op.dst = ChunkRef{bufferOf(step, "dstbuf"),
                                  static_cast<std::uint32_t>(step.integer("dstoff", 0, maxCount))};
                op.count = static_cast<std::uint32_t>(step.integer("cnt", 1, maxCount));
            }
            auto opIndex = static_cast<std::uint32_t>(ops.size());
            if (index > 0)
                op.deps.push_back(opIndex - 1);
            std::int64_t depTb = step.integer("depid", -1, maxCount, -1);
            std::int64_t depStep = step.integer("deps", -1, maxCount, -1);
            if ((depTb < 0) != (depStep < 0))
                step.fail("depid and deps must both be -1 or both name a step");
            if (depTb >= 0)
                pending.push_back(Pending{opIndex, depTb, depStep, step.line()});
            byStep[{id, index}] = opIndex;
            ops.push_back(std::move(op));
        }
    }
    for (const Pending& dep : pending) {
        auto found = byStep.find({dep.tb, dep.step});
        if (found == byStep.end())
            throw Error(file + ":" + std::to_string(dep.line) + ": <step>: depid=" +
                        std::to_string(dep.tb) + " deps=" + std::to_string(dep.step) +
                        " names no step of gpu " + std::to_string(rank));
        ops[dep.op].deps.push_back(found->second);
    }
}

} // namespace

net::CollectiveProgram parseMsccl(const std::string& text, const std::string& fileName)
{
    std::unique_ptr<xmlParserCtxt, ContextFree> context(xmlNewParserCtxt());
    if (!context)
        throw Error(fileName + ": cannot allocate an XML parser");
    if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw Error(fileName + ": the file is too large for an MSCCL program");
    std::unique_ptr<xmlDoc, DocFree> doc(
        xmlCtxtReadMemory(context.get(),
                          text.data(),
                          static_cast<int>(text.size()),
                          fileName.c_str(),
                          nullptr,
                          // NOBLANKS and COMPACT: the DOM of a 1,024-rank program holds
                          // millions of elements; no whitespace nodes, short texts inline.
                          XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                              XML_PARSE_NOBLANKS | XML_PARSE_COMPACT));
    if (!doc) {
        const xmlError* error = xmlCtxtGetLastError(context.get());
        std::string message = error && error->message ? error->message : "not well-formed XML";
        while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
            message.pop_back();
        throw Error(fileName + ":" + std::to_string(error ? error->line : 0) +
                    ": malformed XML: " + message);
    }
    const xmlNode* root = xmlDocGetRootElement(doc.get());
    if (!root)
        throw Error(fileName + ": the document is empty; expected an <algo> element");
    Element algo(fileName, root);
    if (name(root) != "algo")
        algo.fail("the root element must be <algo> (an MSCCL program)");
    algo.only({"name",
               "proto",
               "nchannels",
               "nchunksperloop",
               "ngpus",
               "coll",
               "inplace",
               "outofplace",
               "redop",
               "minBytes",
               "maxBytes"});
    CollectiveProgram program;
    program.source = fileName;
    program.name = algo.has("name") ? algo.text("name") : fileName;
    program.type = collectiveOf(algo);
    auto ranks = static_cast<std::uint32_t>(algo.integer("ngpus", 2, 1 << 16));
    program.chunksPerLoop = static_cast<std::uint32_t>(algo.integer("nchunksperloop", 1, maxCount));
    program.inPlace = algo.integer("inplace", 0, 1, 0) == 1;
    program.ranks.resize(ranks);
    std::vector<const xmlNode*> gpus = algo.children("gpu");
    if (gpus.size() != ranks)
        algo.fail("ngpus=" + std::to_string(ranks) + " but the program has " +
                  std::to_string(gpus.size()) + " <gpu> elements");
    std::vector<bool> seen(ranks, false);
    for (const xmlNode* gpuNode : gpus) {
        Element gpu(fileName, gpuNode);
        gpu.only({"id", "i_chunks", "o_chunks", "s_chunks"});
        auto id = static_cast<std::uint32_t>(gpu.integer("id", 0, ranks - 1));
        if (seen[id])
            gpu.fail("gpu id " + std::to_string(id) + " appears twice");
        seen[id] = true;
        auto in = static_cast<std::uint32_t>(gpu.integer("i_chunks", 0, maxCount));
        auto out = static_cast<std::uint32_t>(gpu.integer("o_chunks", 0, maxCount));
        auto scratch = static_cast<std::uint32_t>(gpu.integer("s_chunks", 0, maxCount, 0));
        if (gpuNode == gpus.front()) {
            program.inputChunks = in;
            program.outputChunks = out;
        } else if (in != program.inputChunks || out != program.outputChunks) {
            gpu.fail("i_chunks=" + std::to_string(in) + " o_chunks=" + std::to_string(out) +
                     " differ from the first gpu's (" + std::to_string(program.inputChunks) + ", " +
                     std::to_string(program.outputChunks) +
                     "); every rank must have the same buffers");
        }
        if (in == 0)
            gpu.fail("i_chunks must be at least 1");
        program.scratchChunks = std::max(program.scratchChunks, scratch);
        readGpu(fileName, gpu, id, program);
    }
    return program;
}

net::CollectiveProgram loadMsccl(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(path + ": cannot open the MSCCL program (check the path; relative paths are "
                           "taken from the platform file's folder)");
    std::ostringstream text;
    text << in.rdbuf();
    return parseMsccl(text.str(), path);
}

} // namespace etsim::platform
