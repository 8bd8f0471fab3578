// Longer than most files (about 1,100 lines): the reader is one state machine (each element's
// schema, the element being read, the program built from the tags) fed by two tokenizers that
// must agree: libxml2's SAX2 callbacks, and the subset reader (in pieces at once) that handles
// what programs are written in and hands anything else to libxml2; they make sense together.
#include "platforms/collectives/MscclReader.h"

#include "kernel/Error.h"

#include <algorithm>
#include <array>
#include <exception>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/tree.h>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <sys/mman.h>
#include <sys/stat.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

namespace etsim::platform {

namespace {

using net::ChunkRef;
using net::CollectiveProgram;
using net::ProgramBuffer;
using net::ProgramOp;
using net::ProgramOpKind;

// The file is read as a stream of start and end tags (libxml2's SAX2 interface): a 1,024-rank
// program has millions of steps, and a document tree of them takes gigabytes. Well-formedness
// is libxml2's: what it refuses is "malformed XML"; a problem of the program found earlier in
// the file is reported first.

struct ContextFree {
    void operator()(xmlParserCtxt* context) const
    {
        if (context->myDoc)
            xmlFreeDoc(context->myDoc);
        context->myDoc = nullptr;
        xmlFreeParserCtxt(context);
    }
};

std::string_view view(const xmlChar* text)
{
    return reinterpret_cast<const char*>(text);
}

// A start tag's attributes as libxml2's SAX2 interface gives them (five pointers each).
struct SaxAttributes {
    int count;
    const xmlChar** values;
};

// A start tag's attributes as the subset reader finds them (pointers into the file).
struct PlainAttributes {
    struct Item {
        std::string_view name;
        std::string_view value;
    };
    static constexpr std::size_t capacity = 16;
    std::array<Item, capacity> items;
    std::size_t count = 0;
};

// Thrown by the subset reader for what it leaves to libxml2.
struct OutsideSubset {};

// The attributes an element may have, in the order of the SAX attribute array's names. Names
// are looked up once in the parser's dictionary, which interns every name it reads, so an
// attribute is matched by comparing a pointer.
template <std::size_t N>
class Schema {
public:
    Schema(xmlDict* dict, const std::array<const char*, N>& names) : names(names)
    {
        for (std::size_t index = 0; index < N; ++index)
            texts[index] = names[index];
        for (std::size_t index = 0; index < N; ++index)
            interned[index] =
                dict ? xmlDictLookup(dict, reinterpret_cast<const xmlChar*>(names[index]), -1)
                     : nullptr;
    }
    /// The index of `name`, or N.
    std::size_t find(const xmlChar* name) const
    {
        for (std::size_t index = 0; index < N; ++index)
            if (interned[index] == name)
                return index;
        // A name from another dictionary (not expected): compare the text.
        for (std::size_t index = 0; index < N; ++index)
            if (view(name) == names[index])
                return index;
        return N;
    }
    /// The index of `name`, or N; `hint` is tried first (writers keep the attributes in order).
    std::size_t find(std::string_view name, std::size_t hint) const
    {
        if (hint < N && same(name, texts[hint]))
            return hint;
        for (std::size_t index = 0; index < N; ++index)
            if (same(name, texts[index]))
                return index;
        return N;
    }
    const char* name(std::size_t index) const { return names[index]; }
    std::string known() const
    {
        std::set<std::string> sorted(names.begin(), names.end());
        std::string out;
        for (const std::string& key : sorted)
            out += (out.empty() ? "" : ", ") + key;
        return out;
    }

private:
    // Names are a few bytes: compared here, not by a call to memcmp.
    static bool same(std::string_view a, std::string_view b)
    {
        if (a.size() != b.size())
            return false;
        for (std::size_t at = 0; at < a.size(); ++at)
            if (a[at] != b[at])
                return false;
        return true;
    }

    std::array<const char*, N> names;
    std::array<std::string_view, N> texts{};
    std::array<const xmlChar*, N> interned{};
};

// One start tag being read: knows its file and line, and the value of each attribute of its
// schema (pointers into the parser's buffer, valid during the callback).
template <std::size_t N>
class Element {
public:
    // Where the element is: the parser (null for the subset reader), the line and the name.
    struct Place {
        const std::string& file;
        xmlParserCtxt* context;
        long line;
        std::string_view name;
    };

    /// Refuses attributes outside the schema (the first check of every element, as they come).
    Element(const Place& place, const Schema<N>& schema, const SaxAttributes& attrs)
        : Element(place, schema)
    {
        const int attributeCount = attrs.count;
        const xmlChar** attributes = attrs.values;
        for (int at = 0; at < attributeCount; ++at) {
            const xmlChar** attr = attributes + 5 * at;
            // A prefix without a namespace keeps its prefix in the name (libxml2's tree did).
            std::size_t index = attr[1] && !attr[2] ? N : schema.find(attr[0]);
            if (index == N)
                fail("the attribute " +
                     (attr[1] && !attr[2] ? std::string(view(attr[1])) + ":" : std::string()) +
                     std::string(view(attr[0])) + " is not modelled (known: " + schema.known() +
                     ")");
            // The first of two attributes of the same name (in different namespaces) counts.
            if (!values[index].data())
                values[index] = std::string_view(reinterpret_cast<const char*>(attr[3]),
                                                 static_cast<std::size_t>(attr[4] - attr[3]));
        }
    }

    /// The same from the subset reader (no namespaces, no references; context is null).
    Element(const Place& place, const Schema<N>& schema, const PlainAttributes& attrs)
        : Element(place, schema)
    {
        for (std::size_t at = 0; at < attrs.count; ++at) {
            std::size_t index = schema.find(attrs.items[at].name, at);
            if (index == N)
                fail("the attribute " + std::string(attrs.items[at].name) +
                     " is not modelled (known: " + schema.known() + ")");
            // Twice the same name is malformed XML: libxml2's to say.
            if (values[index].data())
                throw OutsideSubset{};
            values[index] = attrs.items[at].value;
        }
    }

    [[noreturn]] void fail(const std::string& problem) const
    {
        throw Error(file + ":" + std::to_string(line) + ": <" + std::string(elementName) +
                    ">: " + problem);
    }
    long lineNumber() const { return line; }

    // Attributes are named by their index in the schema.
    bool has(std::size_t attribute) const { return values[attribute].data() != nullptr; }
    std::string text(std::size_t attribute) const
    {
        std::string_view value = values[attribute];
        if (!value.data())
            fail(std::string("needs the attribute ") + schema.name(attribute));
        if (value.find('&') == std::string_view::npos)
            return std::string(value);
        return withReferences(value);
    }
    std::int64_t integer(std::size_t attribute, std::int64_t low, std::int64_t high) const
    {
        std::string_view value = values[attribute];
        std::int64_t number = 0;
        // Plain decimal digits (every value of a generated program) are read in place.
        bool plain = value.data() && !value.empty() && value.size() <= 18;
        std::size_t digit = plain && value[0] == '-' ? 1 : 0;
        plain = plain && digit < value.size();
        for (std::size_t at = digit; plain && at < value.size(); ++at) {
            plain = value[at] >= '0' && value[at] <= '9';
            number = number * 10 + (value[at] - '0');
        }
        if (plain) {
            number = digit ? -number : number;
        } else {
            std::string textValue = text(attribute);
            std::size_t used = 0;
            try {
                number = std::stoll(textValue, &used);
            } catch (const std::exception&) {
                used = 0;
            }
            if (used == 0 || used != textValue.size())
                fail(std::string(schema.name(attribute)) + "=\"" + textValue +
                     "\" is not an integer");
        }
        if (number < low || number > high)
            fail(std::string(schema.name(attribute)) + "=" + text(attribute) +
                 " is out of range (" + std::to_string(low) + " to " + std::to_string(high) + ")");
        return number;
    }
    std::int64_t
    integer(std::size_t attribute, std::int64_t low, std::int64_t high, std::int64_t fallback) const
    {
        return has(attribute) ? integer(attribute, low, high) : fallback;
    }

private:
    Element(const Place& place, const Schema<N>& schema)
        : file(place.file)
        , context(place.context)
        , elementName(place.name)
        , line(place.line)
        , schema(schema)
    {
    }

    // A value holding character or entity references, which the parser leaves in it: replaced
    // as the document tree would (entities of the document's own DTD).
    std::string withReferences(std::string_view value) const
    {
        xmlNode* list = xmlStringLenGetNodeList(context->myDoc,
                                                reinterpret_cast<const xmlChar*>(value.data()),
                                                static_cast<int>(value.size()));
        xmlChar* joined = xmlNodeListGetString(context->myDoc, list, 1);
        std::string out(joined ? reinterpret_cast<const char*>(joined) : "");
        xmlFree(joined);
        xmlFreeNodeList(list);
        return out;
    }

    const std::string& file;
    xmlParserCtxt* context;
    std::string_view elementName;
    long line;
    const Schema<N>& schema;
    std::array<std::string_view, N> values{};
};

// The attributes of each element, in their schema's order.
enum AlgoAttr : std::size_t {
    AlgoName,
    AlgoProto,
    AlgoChannels,
    AlgoChunksPerLoop,
    AlgoGpus,
    AlgoColl,
    AlgoInPlace
};
enum GpuAttr : std::size_t { GpuId, GpuInput, GpuOutput, GpuScratch };
enum TbAttr : std::size_t { TbId, TbSend, TbRecv, TbChannel };
enum StepAttr : std::size_t {
    StepIndex,
    StepType,
    StepSrcBuf,
    StepSrcOff,
    StepDstBuf,
    StepDstOff,
    StepCount,
    StepDepId,
    StepDeps,
};

ProgramOpKind kindOf(const Element<10>& step)
{
    std::string type = step.text(StepType);
    if (std::optional<ProgramOpKind> kind = net::opKindFromMscclName(type))
        return *kind;
    step.fail("unknown step type \"" + type + "\" (s, r, rrc, rrs, rcs, rrcs, cpy, re, nop)");
}

ProgramBuffer bufferOf(const Element<10>& step, std::size_t attribute, const char* name)
{
    std::string value = step.text(attribute);
    if (std::optional<ProgramBuffer> buffer = net::bufferFromMscclName(value))
        return *buffer;
    step.fail(std::string(name) + "=\"" + value + "\" is not a buffer (i, o or s)");
}

constexpr std::int64_t maxCount = 1 << 24;

// The program as its tags arrive. Elements nest as algo > gpu > tb > step; whatever a <step>
// holds is ignored.
class MscclStream {
public:
    // `context` is null for the subset reader, which sets the line itself (setLine).
    MscclStream(const std::string& file, xmlParserCtxt* context)
        : file(file)
        , context(context)
        , algoSchema(context ? context->dict : nullptr,
                     {"name",
                      "proto",
                      "nchannels",
                      "nchunksperloop",
                      "ngpus",
                      "coll",
                      "inplace",
                      "outofplace",
                      "redop",
                      "minBytes",
                      "maxBytes"})
        , gpuSchema(context ? context->dict : nullptr, {"id", "i_chunks", "o_chunks", "s_chunks"})
        , tbSchema(context ? context->dict : nullptr, {"id", "send", "recv", "chan"})
        , stepSchema(context ? context->dict : nullptr,
                     {"s",
                      "type",
                      "srcbuf",
                      "srcoff",
                      "dstbuf",
                      "dstoff",
                      "cnt",
                      "depid",
                      "deps",
                      "hasdep"})
    {
        program.source = file;
        program.origin = net::ProgramOrigin::Msccl;
    }

    template <typename Attributes>
    void start(std::string_view name, const Attributes& attributes)
    {
        ++depth;
        if (depth > 4 || (skipping && depth > 2))
            return;
        switch (depth) {
        case 1:
            startAlgo(name, attributes);
            break;
        case 2:
            if (name != "gpu")
                unexpected(name, "algo", "gpu");
            startGpu(attributes);
            break;
        case 3:
            if (name != "tb")
                unexpected(name, "gpu", "tb");
            startTb(attributes);
            break;
        default:
            if (name != "step")
                unexpected(name, "tb", "step");
            startStep(attributes);
            break;
        }
    }

    void end()
    {
        --depth;
        if (depth == 1 && !skipping)
            endGpu();
        else if (depth == 0)
            endAlgo();
    }

    bool sawRoot() const { return rootSeen; }
    /// The depth of the element being read (1 for <algo>).
    int level() const { return depth; }
    void setLine(long current) { subsetLine = current; }
    /// A piece of the file (SubsetReader): the <gpu> count is checked by whoever joins them.
    void setPartial() { partial = true; }
    std::uint32_t gpuCount() const { return gpus; }
    bool hasGpu(std::uint32_t id) const { return id < seen.size() && seen[id]; }
    CollectiveProgram take() { return std::move(program); }

private:
    [[noreturn]] void unexpected(std::string_view name, const char* parent, const char* child)
    {
        throw Error(file + ":" + std::to_string(line()) + ": <" + std::string(name) +
                    ">: unexpected element inside <" + parent + "> (expected <" + child + ">)");
    }

    long line() const { return context ? xmlSAX2GetLineNumber(context) : subsetLine; }

    template <std::size_t N, typename Attributes>
    Element<N> element(std::string_view name, const Schema<N>& schema, const Attributes& attributes)
    {
        return Element<N>({file, context, line(), name}, schema, attributes);
    }

    template <typename Attributes>
    void startAlgo(std::string_view name, const Attributes& attributes)
    {
        rootSeen = true;
        if (name != "algo")
            throw Error(file + ":" + std::to_string(line()) + ": <" + std::string(name) +
                        ">: the root element must be <algo> (an MSCCL program)");
        Element<11> algo = element(name, algoSchema, attributes);
        algoLine = algo.lineNumber();
        program.name = algo.has(AlgoName) ? algo.text(AlgoName) : file;
        std::string coll = algo.text(AlgoColl);
        std::optional<CollectiveType> type = net::collectiveFromMscclName(coll);
        if (!type)
            algo.fail("coll=\"" + coll +
                      "\" is not modelled (allreduce, allgather, reduce_scatter or alltoall)");
        program.type = *type;
        ranks = static_cast<std::uint32_t>(algo.integer(AlgoGpus, 2, 1 << 16));
        program.chunksPerLoop =
            static_cast<std::uint32_t>(algo.integer(AlgoChunksPerLoop, 1, maxCount));
        program.inPlace = algo.integer(AlgoInPlace, 0, 1, 0) == 1;
        program.ranks.resize(ranks);
        seen.assign(ranks, false);
    }

    void endAlgo()
    {
        if (!partial && gpus != ranks)
            throw Error(file + ":" + std::to_string(algoLine) +
                        ": <algo>: ngpus=" + std::to_string(ranks) + " but the program has " +
                        std::to_string(gpus) + " <gpu> elements");
    }

    template <typename Attributes>
    void startGpu(const Attributes& attributes)
    {
        // More <gpu> elements than ngpus: only counted, for the message at </algo>.
        if (++gpus > ranks)
            skipping = true;
        if (skipping)
            return;
        Element<4> gpu = element("gpu", gpuSchema, attributes);
        auto id = static_cast<std::uint32_t>(gpu.integer(GpuId, 0, ranks - 1));
        if (seen[id])
            gpu.fail("gpu id " + std::to_string(id) + " appears twice");
        seen[id] = true;
        auto in = static_cast<std::uint32_t>(gpu.integer(GpuInput, 0, maxCount));
        auto out = static_cast<std::uint32_t>(gpu.integer(GpuOutput, 0, maxCount));
        auto scratch = static_cast<std::uint32_t>(gpu.integer(GpuScratch, 0, maxCount, 0));
        if (gpus == 1) {
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
        rank = id;
        // Ranks of a collective usually have as many steps as each other: growing the vector
        // step by step would copy every operation about twice.
        program.ranks[rank].ops.reserve(lastRankOps);
        threadblocks.clear();
        pending.clear();
        sendConnections.clear();
        recvConnections.clear();
    }

    template <typename Attributes>
    void startTb(const Attributes& attributes)
    {
        Element<4> tb = element("tb", tbSchema, attributes);
        tbId = tb.integer(TbId, 0, maxCount);
        auto [block, added] = threadblocks.try_emplace(tbId);
        if (!added)
            tb.fail("threadblock id " + std::to_string(tbId) + " appears twice in gpu " +
                    std::to_string(rank));
        tbOps = &block->second;
        sendPeer = tb.integer(TbSend, -1, ranks - 1);
        recvPeer = tb.integer(TbRecv, -1, ranks - 1);
        channel = tb.integer(TbChannel, 0, maxCount, 0);
        if (sendPeer >= 0 && !sendConnections.insert({sendPeer, channel}).second)
            tb.fail("a second threadblock of gpu " + std::to_string(rank) + " sends to gpu " +
                    std::to_string(sendPeer) + " on channel " + std::to_string(channel) +
                    " (the order of their messages would be undefined; use another channel)");
        if (recvPeer >= 0 && !recvConnections.insert({recvPeer, channel}).second)
            tb.fail("a second threadblock of gpu " + std::to_string(rank) + " receives from gpu " +
                    std::to_string(recvPeer) + " on channel " + std::to_string(channel) +
                    " (use another channel)");
    }

    template <typename Attributes>
    void startStep(const Attributes& attributes)
    {
        Element<10> step = element("step", stepSchema, attributes);
        auto& ops = program.ranks[rank].ops;
        std::int64_t index = step.integer(StepIndex, 0, maxCount);
        auto expected = static_cast<std::int64_t>(tbOps->size());
        if (index != expected)
            step.fail("s=" + std::to_string(index) +
                      " but the threadblock's steps must be "
                      "numbered 0, 1, 2, ... in order (expected " +
                      std::to_string(expected) + ")");
        ProgramOp op;
        op.kind = kindOf(step);
        op.origin = static_cast<std::uint64_t>(step.lineNumber());
        op.step = static_cast<std::uint32_t>(index);
        op.channel = static_cast<std::uint32_t>(channel);
        op.threadblock = static_cast<std::uint32_t>(tbId);
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
            op.src = ChunkRef{bufferOf(step, StepSrcBuf, "srcbuf"),
                              static_cast<std::uint32_t>(step.integer(StepSrcOff, 0, maxCount))};
            op.dst = ChunkRef{bufferOf(step, StepDstBuf, "dstbuf"),
                              static_cast<std::uint32_t>(step.integer(StepDstOff, 0, maxCount))};
            op.count = static_cast<std::uint32_t>(step.integer(StepCount, 1, maxCount));
        }
        auto opIndex = static_cast<std::uint32_t>(ops.size());
        if (index > 0)
            op.deps.push_back(opIndex - 1);
        std::int64_t depTb = step.integer(StepDepId, -1, maxCount, -1);
        std::int64_t depStep = step.integer(StepDeps, -1, maxCount, -1);
        if ((depTb < 0) != (depStep < 0))
            step.fail("depid and deps must both be -1 or both name a step");
        if (depTb >= 0)
            pending.push_back(Pending{opIndex, depTb, depStep, step.lineNumber()});
        tbOps->push_back(opIndex);
        ops.push_back(std::move(op));
    }

    // Dependencies are resolved when the GPU's threadblocks are all read (depid may name a
    // later one).
    void endGpu()
    {
        auto& ops = program.ranks[rank].ops;
        lastRankOps = ops.size();
        for (const Pending& dep : pending) {
            auto block = threadblocks.find(dep.tb);
            if (block == threadblocks.end() ||
                dep.step >= static_cast<std::int64_t>(block->second.size()))
                throw Error(file + ":" + std::to_string(dep.line) + ": <step>: depid=" +
                            std::to_string(dep.tb) + " deps=" + std::to_string(dep.step) +
                            " names no step of gpu " + std::to_string(rank));
            ops[dep.op].deps.push_back(block->second[static_cast<std::size_t>(dep.step)]);
        }
    }

    const std::string& file;
    xmlParserCtxt* context;
    Schema<11> algoSchema;
    Schema<4> gpuSchema;
    Schema<4> tbSchema;
    Schema<10> stepSchema;
    CollectiveProgram program;
    int depth = 0;
    bool rootSeen = false;
    bool skipping = false;
    bool partial = false;
    long subsetLine = 0;
    long algoLine = 0;
    std::uint32_t ranks = 0;
    std::uint32_t gpus = 0;
    std::vector<bool> seen;

    // The GPU being read: its threadblocks' operations in step order, the pending depid/deps
    // of its operations, its connections.
    struct Pending {
        std::uint32_t op;
        std::int64_t tb;
        std::int64_t step;
        long line;
    };
    std::uint32_t rank = 0;
    std::size_t lastRankOps = 0;
    std::map<std::int64_t, std::vector<std::uint32_t>> threadblocks;
    std::vector<Pending> pending;
    std::set<std::pair<std::int64_t, std::int64_t>> sendConnections, recvConnections;

    // The threadblock being read.
    std::int64_t tbId = 0;
    std::vector<std::uint32_t>* tbOps = nullptr;
    std::int64_t sendPeer = -1;
    std::int64_t recvPeer = -1;
    std::int64_t channel = 0;
};

// What the SAX callbacks reach through the parser context's _private: the program being read
// and the first error, which is rethrown once libxml2 has returned (an exception must not
// cross its C frames).
struct ParseState {
    xmlParserCtxt* context = nullptr;
    MscclStream* stream = nullptr;
    std::exception_ptr error;
};

ParseState* stateOf(void* userData)
{
    // Elements of an entity's replacement text come through a parser context of its own
    // (which inherits _private); the document tree did not place them among the elements
    // either, so they are not read.
    auto* context = static_cast<xmlParserCtxt*>(userData);
    auto* state = static_cast<ParseState*>(context->_private);
    return state && state->context == context ? state : nullptr;
}

void onStart(void* userData,
             const xmlChar* localName,
             const xmlChar* /*prefix*/,
             const xmlChar* /*uri*/,
             int /*namespaceCount*/,
             const xmlChar** /*namespaces*/,
             int attributeCount,
             int defaultedCount,
             const xmlChar** attributes)
{
    ParseState* state = stateOf(userData);
    if (!state || state->error)
        return;
    try {
        // Attributes a DTD adds are not the file's (the document tree left them out too).
        state->stream->start(view(localName),
                             SaxAttributes{attributeCount - defaultedCount, attributes});
    } catch (...) {
        state->error = std::current_exception();
        xmlStopParser(static_cast<xmlParserCtxt*>(userData));
    }
}

void onEnd(void* userData,
           const xmlChar* /*localName*/,
           const xmlChar* /*prefix*/,
           const xmlChar* /*uri*/)
{
    ParseState* state = stateOf(userData);
    if (!state || state->error)
        return;
    try {
        state->stream->end();
    } catch (...) {
        state->error = std::current_exception();
        xmlStopParser(static_cast<xmlParserCtxt*>(userData));
    }
}

// The subset of XML that programs are written in, read without libxml2 (which costs more than
// the rest of `etsim collective verify` on a 1,024-rank ring): elements, attributes in quotes,
// blanks between them. Whatever is outside it, malformed or a problem of the program makes the
// reader give up, and libxml2 reads the file from the start: every message comes from there.
class SubsetReader {
public:
    SubsetReader(std::string_view text, const std::string& fileName)
        : text(text)
        , at(text.data())
        , end(text.data() + text.size())
        , stop(end)
        , stream(fileName, nullptr)
    {
    }

    /// Reads only the <gpu> elements from `from` to `to` (offsets of <gpu> tags inside the
    /// root, or the end), after the root's start tag: one piece of readPieces.
    void piece(std::size_t from, std::size_t to)
    {
        resume = from > 0 ? text.data() + from : nullptr;
        stop = text.data() + to;
        stream.setPartial();
    }

    std::optional<CollectiveProgram> read()
    {
        try {
            readElements();
        } catch (const OutsideSubset&) {
            return std::nullopt;
        } catch (const Error&) {
            return std::nullopt;
        }
        // A piece but the last ends inside the root; the last and a whole file after it.
        if (!stream.sawRoot() || open.size() != (stop != end ? 1U : 0U))
            return std::nullopt;
        return stream.take();
    }

    const MscclStream& state() const { return stream; }

private:
    // Below libxml2's own limits (names, values, depth), which are then its to report.
    static constexpr std::ptrdiff_t longest = 1 << 16;
    static constexpr std::size_t deepest = 64;

    static bool nameStart(char c)
    {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    }
    static bool nameChar(char c)
    {
        return nameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
    }
    // Blanks inside a tag: a tag on one line has the line libxml2 gives its element.
    void skipBlanks()
    {
        while (at < end && (*at == ' ' || *at == '\t'))
            ++at;
    }
    void expect(char c)
    {
        if (at == end || *at != c)
            throw OutsideSubset{};
        ++at;
    }
    std::string_view name()
    {
        const char* begin = at;
        if (at == end || !nameStart(*at))
            throw OutsideSubset{};
        while (at < end && nameChar(*at))
            ++at;
        if (at - begin > longest)
            throw OutsideSubset{};
        return {begin, static_cast<std::size_t>(at - begin)};
    }

    void readElements()
    {
        bool rootDone = false;
        for (;;) {
            // Between tags only blanks; CR (which XML turns into LF) is left to libxml2.
            while (at < end && (*at == ' ' || *at == '\t' || *at == '\n')) {
                line += *at == '\n';
                ++at;
            }
            if (at == end)
                return;
            if (at >= stop) {
                // The next piece's first <gpu>, reached between the root's children.
                if (at != stop || open.size() != 1)
                    throw OutsideSubset{};
                return;
            }
            // Text, a second root and whatever begins with "<!" or "<?" are not in the subset.
            if (rootDone || *at != '<')
                throw OutsideSubset{};
            ++at;
            if (at < end && *at == '/')
                endTag();
            else
                startTag();
            if (resume) {
                // A piece after the first: on from its first <gpu>, the lines before counted.
                if (open.size() != 1 || at > resume)
                    throw OutsideSubset{};
                line += std::count(at, resume, '\n');
                at = resume;
                resume = nullptr;
            }
            rootDone = open.empty();
        }
    }

    void endTag()
    {
        ++at;
        std::string_view closing = name();
        skipBlanks();
        expect('>');
        if (open.empty() || open.back() != closing)
            throw OutsideSubset{};
        open.pop_back();
        stream.setLine(line);
        stream.end();
    }

    void startTag()
    {
        std::string_view element = name();
        attributes.count = 0;
        bool empty = false;
        for (;;) {
            const char* before = at;
            skipBlanks();
            if (at < end && *at == '>') {
                ++at;
                break;
            }
            if (at < end && *at == '/') {
                ++at;
                expect('>');
                empty = true;
                break;
            }
            // Attributes are separated by blanks.
            if (at == before || attributes.count == PlainAttributes::capacity)
                throw OutsideSubset{};
            std::string_view attribute = name();
            skipBlanks();
            expect('=');
            skipBlanks();
            if (at == end || (*at != '"' && *at != '\''))
                throw OutsideSubset{};
            const char quote = *at++;
            const char* value = at;
            // References, '<', control characters (which libxml2 normalises or refuses) and
            // anything not ASCII (whose encoding is libxml2's to check) end the subset.
            while (at < end && *at != quote) {
                auto c = static_cast<unsigned char>(*at);
                if (c < 0x20 || c >= 0x80 || c == '<' || c == '&')
                    throw OutsideSubset{};
                ++at;
            }
            if (at == end || at - value > longest)
                throw OutsideSubset{};
            attributes.items[attributes.count++] = {
                attribute, std::string_view(value, static_cast<std::size_t>(at - value))};
            ++at;
        }
        if (open.size() == deepest)
            throw OutsideSubset{};
        // The reader skips what a <step> holds, but a name given twice there is still
        // malformed.
        if (open.size() >= 4)
            for (std::size_t first = 0; first < attributes.count; ++first)
                for (std::size_t second = first + 1; second < attributes.count; ++second)
                    if (attributes.items[first].name == attributes.items[second].name)
                        throw OutsideSubset{};
        stream.setLine(line);
        stream.start(element, attributes);
        if (empty)
            stream.end();
        else
            open.push_back(element);
    }

    std::string_view text;
    const char* at;
    const char* end;
    // Where the piece begins (after the root's start tag) and ends.
    const char* resume = nullptr;
    const char* stop;
    long line = 1;
    MscclStream stream;
    PlainAttributes attributes;
    std::vector<std::string_view> open;
};

// Reads the file in `threads` pieces at once, each beginning at a <gpu> tag near an even share
// of the file (<gpu> elements are independent until the verifier). Joined in file order they
// are what one reader gives; a problem in any piece or in joining them (a gpu id twice, other
// buffers, a wrong count) is nothing, for libxml2 to read and report.
std::vector<std::size_t> pieceStarts(std::string_view text, unsigned threads)
{
    // Smaller pieces cost more in threads than they save.
    constexpr std::size_t smallestPiece = 1 << 16;
    std::vector<std::size_t> starts{0};
    for (unsigned piece = 1; piece < threads; ++piece) {
        std::size_t at = text.find("<gpu", std::max(starts.back(), text.size() / threads * piece));
        while (at != std::string_view::npos && at + 4 < text.size() &&
               std::string_view(" \t\n>/").find(text[at + 4]) == std::string_view::npos)
            at = text.find("<gpu", at + 4);
        if (at == std::string_view::npos || at + 4 >= text.size() ||
            at - starts.back() < smallestPiece)
            continue;
        starts.push_back(at);
    }
    return starts;
}

std::optional<CollectiveProgram>
readPieces(std::string_view text, const std::string& fileName, unsigned threads)
{
    std::vector<std::size_t> starts = pieceStarts(text, threads);
    if (starts.size() == 1)
        return SubsetReader(text, fileName).read();
    starts.push_back(text.size());
    const std::size_t pieces = starts.size() - 1;
    std::vector<std::unique_ptr<SubsetReader>> readers;
    std::vector<std::optional<CollectiveProgram>> parts(pieces);
    for (std::size_t piece = 0; piece < pieces; ++piece) {
        readers.push_back(std::make_unique<SubsetReader>(text, fileName));
        readers.back()->piece(starts[piece], starts[piece + 1]);
    }
    {
        // Whatever a piece throws (memory) leaves it empty: libxml2 then reads the file, on
        // this thread, and throws it there if it must.
        auto read = [&](std::size_t piece) {
            try {
                parts[piece] = readers[piece]->read();
            } catch (...) {
                parts[piece].reset();
            }
        };
        std::vector<std::thread> workers;
        for (std::size_t piece = 1; piece < pieces; ++piece) {
            try {
                workers.emplace_back(read, piece);
            } catch (const std::system_error&) {
                read(piece); // no thread to be had: read here
            }
        }
        read(0);
        for (std::thread& worker : workers)
            worker.join();
    }
    for (const std::optional<CollectiveProgram>& part : parts)
        if (!part)
            return std::nullopt;
    CollectiveProgram joined = std::move(*parts[0]);
    std::vector<bool> seen(joined.rankCount(), false);
    std::uint32_t gpus = 0;
    for (std::size_t piece = 0; piece < pieces; ++piece) {
        const MscclStream& state = readers[piece]->state();
        CollectiveProgram& part = *parts[piece];
        if (state.gpuCount() == 0)
            continue;
        if (gpus == 0) {
            joined.inputChunks = part.inputChunks;
            joined.outputChunks = part.outputChunks;
        } else if (part.inputChunks != joined.inputChunks ||
                   part.outputChunks != joined.outputChunks) {
            return std::nullopt;
        }
        joined.scratchChunks = std::max(joined.scratchChunks, part.scratchChunks);
        gpus += state.gpuCount();
        for (std::uint32_t rank = 0; rank < joined.rankCount(); ++rank) {
            if (!state.hasGpu(rank))
                continue;
            if (seen[rank])
                return std::nullopt;
            seen[rank] = true;
            if (piece > 0)
                joined.ranks[rank] = std::move(part.ranks[rank]);
        }
    }
    if (gpus != joined.rankCount())
        return std::nullopt;
    return joined;
}

void refuseHuge(std::string_view text, const std::string& fileName)
{
    if (text.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw Error(fileName + ": the file is too large for an MSCCL program");
}

// The text may be a mapped file (loadMsccl).
net::CollectiveProgram parseWithLibxml2(std::string_view text, const std::string& fileName)
{
    refuseHuge(text, fileName);
    // The input as xmlCtxtReadMemory sets it up (an empty text is then libxml2's "Document is
    // empty", as before).
    std::unique_ptr<xmlParserCtxt, ContextFree> context(xmlNewParserCtxt());
    if (!context)
        throw Error(fileName + ": cannot allocate an XML parser");
    xmlParserInputBuffer* buffer = xmlParserInputBufferCreateMem(
        text.data(), static_cast<int>(text.size()), XML_CHAR_ENCODING_NONE);
    xmlParserInput* input =
        buffer ? xmlNewIOInputStream(context.get(), buffer, XML_CHAR_ENCODING_NONE) : nullptr;
    if (!input) {
        if (buffer)
            xmlFreeParserInputBuffer(buffer);
        throw Error(fileName + ": cannot allocate an XML parser");
    }
    inputPush(context.get(), input);
    // The tree builder's handlers for the DTD (so that entities are declared as before), ours
    // for elements; text, comments and processing instructions are not read.
    xmlSAXVersion(context->sax, 2);
    context->sax->startElementNs = onStart;
    context->sax->endElementNs = onEnd;
    context->sax->characters = nullptr;
    context->sax->ignorableWhitespace = nullptr;
    context->sax->cdataBlock = nullptr;
    context->sax->comment = nullptr;
    context->sax->processingInstruction = nullptr;
    context->sax->reference = nullptr;
    xmlCtxtUseOptions(context.get(), XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (!context->input->filename)
        context->input->filename =
            reinterpret_cast<char*>(xmlStrdup(reinterpret_cast<const xmlChar*>(fileName.c_str())));
    MscclStream stream(fileName, context.get());
    ParseState state{context.get(), &stream, nullptr};
    context->_private = &state;
    xmlParseDocument(context.get());
    if (state.error)
        std::rethrow_exception(state.error);
    if (!context->wellFormed) {
        const xmlError* error = xmlCtxtGetLastError(context.get());
        std::string message = error && error->message ? error->message : "not well-formed XML";
        while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
            message.pop_back();
        throw Error(fileName + ":" + std::to_string(error ? error->line : 0) +
                    ": malformed XML: " + message);
    }
    if (!stream.sawRoot())
        throw Error(fileName + ": the document is empty; expected an <algo> element");
    return stream.take();
}

net::CollectiveProgram
parseText(std::string_view text, const std::string& fileName, unsigned threads)
{
    refuseHuge(text, fileName);
    if (std::optional<CollectiveProgram> program = readPieces(text, fileName, threads))
        return std::move(*program);
    return parseWithLibxml2(text, fileName);
}

} // namespace

net::CollectiveProgram
parseMsccl(const std::string& text, const std::string& fileName, unsigned threads)
{
    return parseText(text, fileName, threads);
}

std::optional<net::CollectiveProgram>
parseMscclSubset(std::string_view text, const std::string& fileName, unsigned threads)
{
    return readPieces(text, fileName, threads);
}

std::size_t mscclPieces(std::string_view text, unsigned threads)
{
    return pieceStarts(text, threads).size();
}

net::CollectiveProgram parseMscclWithLibxml2(std::string_view text, const std::string& fileName)
{
    return parseWithLibxml2(text, fileName);
}

net::CollectiveProgram loadMsccl(const std::string& path, unsigned threads)
{
    // A regular file is mapped, not copied: libxml2 keeps a copy of its own, and a 1,024-rank
    // program is a quarter of a gigabyte.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat info {};
    if (fd >= 0 && ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
        auto size = static_cast<std::size_t>(info.st_size);
        void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        ::close(fd);
        if (mapped != MAP_FAILED) {
            struct Unmap {
                void* at;
                std::size_t size;
                ~Unmap() { ::munmap(at, size); }
            } unmap{mapped, size};
            return parseText(
                std::string_view(static_cast<const char*>(mapped), size), path, threads);
        }
    } else if (fd >= 0) {
        ::close(fd);
    }
    // Anything else (an empty file, a folder, a pipe) is read as a stream, as before.
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(path + ": cannot open the MSCCL program (check the path; relative paths are "
                           "taken from the platform file's folder)");
    std::string text(std::istreambuf_iterator<char>(in), {});
    return parseText(text, path, threads);
}

} // namespace etsim::platform
