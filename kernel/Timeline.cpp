#include "kernel/Timeline.h"

#include "kernel/Error.h"
#include "kernel/Utf8.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <unistd.h>
#include <utility>

namespace etsim {

namespace {

// The document around the events; the display unit ("ns" or "ms") is always two letters.
constexpr std::string_view headerStart = R"({"displayTimeUnit":")";
constexpr std::string_view headerEnd = "\",\"traceEvents\":[\n";
constexpr std::size_t headerBytes = headerStart.size() + 2 + headerEnd.size();
constexpr std::string_view footer = "\n]}\n";
constexpr char hexDigits[] = "0123456789abcdef";

template <typename Number>
void appendNumber(std::string& out, Number number)
{
    char text[32];
    auto [end, problem] = std::to_chars(text, text + sizeof text, number);
    out.append(text, end);
}

void appendReal(std::string& out, double number)
{
    // JSON has no NaN or infinity; null keeps the document valid.
    if (!std::isfinite(number))
        out += "null";
    else
        appendNumber(out, number);
}

// Picoseconds as microseconds: the integer part, then up to six fractional digits with
// trailing zeros dropped, so the value is exact (a double would round large times).
void appendMicroseconds(std::string& out, std::uint64_t picoseconds)
{
    appendNumber(out, picoseconds / 1000000);
    std::uint64_t fraction = picoseconds % 1000000;
    if (fraction == 0)
        return;
    char digits[6];
    for (int i = 5; i >= 0; --i) {
        digits[i] = static_cast<char>('0' + fraction % 10);
        fraction /= 10;
    }
    int length = 6;
    while (digits[length - 1] == '0')
        --length;
    out += '.';
    out.append(digits, static_cast<std::size_t>(length));
}

void appendString(std::string& out, std::string_view text)
{
    out += '"';
    std::size_t at = 0;
    while (at < text.size()) {
        auto c = static_cast<unsigned char>(text[at]);
        if (c >= 0x80) {
            // Invalid UTF-8 would make the whole file unreadable to strict parsers: replace
            // each bad byte with U+FFFD.
            std::size_t length = utf8SequenceLength(text, at);
            if (length == 0) {
                out += "\\ufffd";
                ++at;
            } else {
                out.append(text.substr(at, length));
                at += length;
            }
            continue;
        }
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20) {
                out += "\\u00";
                out += hexDigits[c >> 4U];
                out += hexDigits[c & 0x0FU];
            } else {
                out += static_cast<char>(c);
            }
        }
        ++at;
    }
    out += '"';
}

} // namespace

Timeline::Timeline(std::string path, TimelineOptions options)
    : filePath(std::move(path))
    , batchBytes(options.batchBytes == 0 ? 1 : options.batchBytes)
    , windowStart(options.windowStartPs)
    , windowEnd(options.windowEndPs)
{
    if (windowStart >= windowEnd)
        throw Error("timeline \"" + filePath + "\": the window [" + std::to_string(windowStart) +
                    " ps, " + std::to_string(windowEnd) +
                    " ps) is empty; its start must come before its end");
    try {
        output = std::make_unique<AtomicFile>(filePath);
    } catch (const OutputError& error) {
        throw Error("timeline file \"" + filePath + "\": " + error.problem());
    }
    // stdio owns a duplicate descriptor; the AtomicFile keeps its own for fsync and rename.
    const int descriptor = ::dup(output->fd());
    file = descriptor < 0 ? nullptr : ::fdopen(descriptor, "wb");
    if (file == nullptr) {
        const int code = errno;
        if (descriptor >= 0)
            ::close(descriptor);
        output->fail("open", code);
    }
    std::string header(headerStart);
    header += options.displayTimeUnit == DisplayTimeUnit::Milliseconds ? "ms" : "ns";
    header += headerEnd;
    // Goes to the stdio buffer; a failure shows when the writer thread flushes.
    std::fwrite(header.data(), 1, header.size(), file);
    filling.reserve(batchBytes + 256);
    writing.reserve(batchBytes + 256);
    try {
        writer = std::thread([this] { writerLoop(); });
    } catch (...) {
        std::fclose(file);
        throw;
    }
}

Timeline::~Timeline()
{
    try {
        close();
    } catch (...) { // NOLINT(bugprone-empty-catch): a destructor must not throw
    }
    if (writer.joinable()) {
        {
            std::lock_guard<std::mutex> guard(lock);
            stopping = true;
        }
        changed.notify_all();
        writer.join();
    }
    if (file != nullptr)
        std::fclose(file);
}

void Timeline::checkOpen() const
{
    if (closed)
        throw Error("timeline file \"" + filePath +
                    "\": event recorded after close(); record every event before closing");
}

std::string&
Timeline::beginEvent(std::string_view phase, std::string_view name, std::uint32_t processId)
{
    checkOpen();
    if (events > 0)
        filling += ",\n";
    filling += R"({"ph":")";
    filling += phase;
    filling += R"(","name":)";
    appendString(filling, name);
    filling += ",\"pid\":";
    appendNumber(filling, processId);
    return filling;
}

void Timeline::endEvent()
{
    filling += '}';
    ++events;
    if (filling.size() >= batchBytes)
        handOff(false);
}

void Timeline::appendEvents(std::string_view text, std::uint64_t count)
{
    checkOpen();
    if (count == 0)
        return;
    if (events > 0)
        filling += ",\n";
    filling += text;
    events += count;
    if (filling.size() >= batchBytes)
        handOff(false);
}

void Timeline::appendArgs(TraceArgs args)
{
    if (args.empty())
        return;
    filling += ",\"args\":{";
    bool first = true;
    for (const TraceArg& arg : args) {
        if (!first)
            filling += ',';
        first = false;
        appendString(filling, arg.argKey);
        filling += ':';
        switch (arg.type) {
        case TraceArg::Type::Text:
            appendString(filling, arg.text);
            break;
        case TraceArg::Type::Bool:
            filling += arg.flag ? "true" : "false";
            break;
        case TraceArg::Type::Signed:
            appendNumber(filling, arg.signedNumber);
            break;
        case TraceArg::Type::Unsigned:
            appendNumber(filling, arg.unsignedNumber);
            break;
        case TraceArg::Type::Real:
            appendReal(filling, arg.real);
            break;
        }
    }
    filling += '}';
}

void Timeline::processName(std::uint32_t processId, std::string_view name, std::int64_t sortIndex)
{
    std::string& out = beginEvent("M", "process_name", processId);
    out += R"(,"args":{"name":)";
    appendString(out, name);
    out += '}';
    endEvent();
    beginEvent("M", "process_sort_index", processId);
    appendArgs({{"sort_index", sortIndex}});
    endEvent();
}

void Timeline::threadName(std::uint32_t processId,
                          std::uint32_t threadId,
                          std::string_view name,
                          std::int64_t sortIndex)
{
    std::string& out = beginEvent("M", "thread_name", processId);
    out += ",\"tid\":";
    appendNumber(out, threadId);
    out += R"(,"args":{"name":)";
    appendString(out, name);
    out += '}';
    endEvent();
    beginEvent("M", "thread_sort_index", processId);
    out += ",\"tid\":";
    appendNumber(out, threadId);
    appendArgs({{"sort_index", sortIndex}});
    endEvent();
}

void Timeline::complete(std::uint32_t processId,
                        std::uint32_t threadId,
                        std::string_view name,
                        std::string_view category,
                        std::uint64_t startPs,
                        std::uint64_t durationPs,
                        TraceArgs args)
{
    if (durationPs == 0) {
        if (!inWindow(startPs))
            return;
    } else {
        const std::uint64_t endPs = startPs + durationPs;
        if (endPs <= windowStart || startPs >= windowEnd)
            return;
        startPs = std::max(startPs, windowStart);
        durationPs = std::min(endPs, windowEnd) - startPs;
    }
    std::string& out = beginEvent("X", name, processId);
    out += ",\"tid\":";
    appendNumber(out, threadId);
    out += ",\"cat\":";
    appendString(out, category);
    out += ",\"ts\":";
    appendMicroseconds(out, startPs);
    out += ",\"dur\":";
    appendMicroseconds(out, durationPs);
    appendArgs(args);
    endEvent();
}

void Timeline::instant(std::uint32_t processId,
                       std::uint32_t threadId,
                       std::string_view name,
                       std::string_view category,
                       std::uint64_t timePs,
                       TraceArgs args)
{
    if (!inWindow(timePs))
        return;
    std::string& out = beginEvent("i", name, processId);
    out += ",\"tid\":";
    appendNumber(out, threadId);
    out += ",\"cat\":";
    appendString(out, category);
    out += R"(,"s":"t","ts":)";
    appendMicroseconds(out, timePs);
    appendArgs(args);
    endEvent();
}

void Timeline::counter(std::uint32_t processId,
                       std::string_view name,
                       std::uint64_t timePs,
                       TraceArgs series)
{
    // Checked before anything is formatted so a rejected call leaves no partial event.
    if (series.empty())
        throw Error("timeline counter \"" + std::string(name) +
                    "\": no series given; pass at least one {name, number}");
    for (const TraceArg& arg : series)
        if (!arg.isNumber())
            throw Error("timeline counter \"" + std::string(name) + "\": series \"" +
                        std::string(arg.key()) +
                        "\" is not a number; counter values must be "
                        "numbers");
    if (!inWindow(timePs))
        return;
    std::string& out = beginEvent("C", name, processId);
    out += ",\"ts\":";
    appendMicroseconds(out, timePs);
    appendArgs(series);
    endEvent();
}

void Timeline::flowStart(std::uint32_t processId,
                         std::uint32_t threadId,
                         std::string_view name,
                         std::string_view category,
                         std::uint64_t flowId,
                         std::uint64_t timePs)
{
    flowEvent("s", processId, threadId, name, category, flowId, timePs);
}

void Timeline::flowEnd(std::uint32_t processId,
                       std::uint32_t threadId,
                       std::string_view name,
                       std::string_view category,
                       std::uint64_t flowId,
                       std::uint64_t timePs)
{
    flowEvent("f", processId, threadId, name, category, flowId, timePs);
}

void Timeline::flowEvent(std::string_view phase,
                         std::uint32_t processId,
                         std::uint32_t threadId,
                         std::string_view name,
                         std::string_view category,
                         std::uint64_t flowId,
                         std::uint64_t timePs)
{
    if (!inWindow(timePs))
        return;
    std::string& out = beginEvent(phase, name, processId);
    out += ",\"tid\":";
    appendNumber(out, threadId);
    out += ",\"cat\":";
    appendString(out, category);
    out += ",\"id\":";
    appendNumber(out, flowId);
    // Without "bp":"e" a flow's end would attach to the next slice that starts after timePs.
    if (phase == "f")
        out += R"(,"bp":"e")";
    out += ",\"ts\":";
    appendMicroseconds(out, timePs);
    endEvent();
}

void Timeline::handOff(bool waitUntilWritten)
{
    std::unique_lock<std::mutex> guard(lock);
    // At most one batch waits for the writer: this bounds memory to about two batches.
    changed.wait(guard, [this] { return !writePending; });
    if (failure.empty() && !filling.empty()) {
        writing.swap(filling);
        writePending = true;
        ++batches;
        changed.notify_all();
    }
    filling.clear();
    if (waitUntilWritten)
        changed.wait(guard, [this] { return !writePending; });
    if (!failure.empty())
        throw Error(failure);
}

void Timeline::flush()
{
    checkOpen();
    handOff(true);
}

void Timeline::writerLoop()
{
    std::unique_lock<std::mutex> guard(lock);
    while (true) {
        changed.wait(guard, [this] { return writePending || stopping; });
        if (!writePending)
            return;
        bool healthy = failure.empty();
        guard.unlock();
        // `writing` is the writer's alone while writePending is set.
        std::string problem;
        if (healthy && (std::fwrite(writing.data(), 1, writing.size(), file) != writing.size() ||
                        std::fflush(file) != 0))
            problem = "timeline file \"" + filePath + "\": write failed: " + errnoText(errno) +
                      removalNote();
        guard.lock();
        if (failure.empty())
            failure = std::move(problem);
        writing.clear();
        writePending = false;
        changed.notify_all();
    }
}

std::string Timeline::removalNote() const
{
    return output->inPlace() ? "" : "; the partial timeline is removed";
}

void Timeline::close()
{
    if (closed)
        return;
    closed = true;
    {
        std::unique_lock<std::mutex> guard(lock);
        changed.wait(guard, [this] { return !writePending; });
        if (failure.empty() && !filling.empty()) {
            writing.swap(filling);
            writePending = true;
            ++batches;
        }
        stopping = true;
    }
    changed.notify_all();
    writer.join(); // the writer drains the pending batch before it stops
    filling.clear();
    if (failure.empty() && (std::fwrite(footer.data(), 1, footer.size(), file) != footer.size() ||
                            std::fflush(file) != 0))
        failure =
            "timeline file \"" + filePath + "\": write failed: " + errnoText(errno) + removalNote();
    if (std::fclose(file) != 0 && failure.empty())
        failure =
            "timeline file \"" + filePath + "\": close failed: " + errnoText(errno) + removalNote();
    file = nullptr;
    // A failed write leaves no partial timeline: the temporary file goes, the reason stays.
    if (!failure.empty()) {
        output->abandon();
        throw Error(failure);
    }
    output->commit();
}

// ---------------------------------------------------------------------------------------------

TimelineEventReader::TimelineEventReader(const std::string& path) : filePath(path)
{
    auto fail = [&](const std::string& problem) {
        throw Error("timeline file \"" + filePath + "\": " + problem);
    };
    owner.reset(std::fopen(path.c_str(), "rb"));
    if (!owner)
        fail(std::string("cannot be read: ") + std::strerror(errno));
    std::FILE* file = owner.get();
    std::string header(headerBytes, '\0');
    const std::size_t got = std::fread(header.data(), 1, header.size(), file);
    if (got != header.size() || header.compare(0, headerStart.size(), headerStart) != 0 ||
        header.compare(headerBytes - headerEnd.size(), headerEnd.size(), headerEnd) != 0 ||
        std::fseek(file, -static_cast<long>(footer.size()), SEEK_END) != 0)
        fail("not a timeline etsim wrote (its header differs)");
    const long footerAt = std::ftell(file);
    std::string end(footer.size(), '\0');
    if (footerAt < static_cast<long>(headerBytes) ||
        std::fread(end.data(), 1, end.size(), file) != end.size() || end != footer)
        fail("not a closed timeline (its end is missing: was the run stopped?)");
    remaining = static_cast<std::uint64_t>(footerAt) - headerBytes;
    if (std::fseek(file, static_cast<long>(headerBytes), SEEK_SET) != 0)
        fail(std::string("cannot be read: ") + std::strerror(errno));
}

TimelineEventReader::Chunk TimelineEventReader::next(std::size_t bytes)
{
    const std::size_t block = std::max<std::size_t>(bytes, 1);
    Chunk chunk;
    while (chunk.text.empty() && (remaining > 0 || !carry.empty())) {
        const std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>(block, remaining));
        const std::size_t had = carry.size();
        carry.resize(had + want);
        if (std::fread(carry.data() + had, 1, want, owner.get()) != want)
            throw Error("timeline file \"" + filePath + "\": cannot be read: " +
                        (std::ferror(owner.get()) ? std::strerror(errno) : "it got shorter"));
        remaining -= want;
        if (remaining == 0) {
            chunk.text = std::move(carry);
            carry.clear();
        } else if (const std::size_t cut = carry.rfind(",\n"); cut != std::string::npos) {
            chunk.text = carry.substr(0, cut);
            carry.erase(0, cut + 2);
        }
    }
    if (!chunk.text.empty()) {
        chunk.count = 1;
        for (std::size_t at = chunk.text.find(",\n"); at != std::string::npos;
             at = chunk.text.find(",\n", at + 2))
            ++chunk.count;
    }
    return chunk;
}

} // namespace etsim
