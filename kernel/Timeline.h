#pragma once
// Writer of Chrome trace event files (the JSON Object Format: {"displayTimeUnit": ...,
// "traceEvents": [...]}), which ui.perfetto.dev and chrome://tracing open. Each rank is a
// process, each resource (engine, DMA queue, link) a thread of it.
//
// Events are formatted into an in-memory batch; a full batch is handed to a writer thread
// and a fresh one is filled meanwhile, so memory stays at about two batches however long
// the run. The file is a valid JSON document after close(), and also after the destructor,
// including when it runs during stack unwinding: a run that ends in an error still leaves
// a trace that opens.
//
// Times are integer picoseconds of simulated time; the file holds microseconds (the format's
// unit) written as exact decimals with six fractional digits at most.
//
// One producer: calls must not race with each other (the SystemC kernel is single-threaded).

#include "kernel/AtomicFile.h"

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

namespace etsim {

/// One "args" entry of an event: a key and a number, a boolean or a string. Holds views:
/// the text is copied when the event is written, so temporaries are fine.
class TraceArg {
public:
    TraceArg(std::string_view key, std::string_view text) : argKey(key), text(text) {}
    TraceArg(std::string_view key, const char* text)
        : TraceArg(key, text == nullptr ? std::string_view() : std::string_view(text))
    {
    }
    TraceArg(std::string_view key, const std::string& text) : TraceArg(key, std::string_view(text))
    {
    }
    TraceArg(std::string_view key, bool flag) : argKey(key), type(Type::Bool), flag(flag) {}
    template <
        typename Integer,
        std::enable_if_t<std::is_integral_v<Integer> && !std::is_same_v<Integer, bool>, int> = 0>
    TraceArg(std::string_view key, Integer number) : argKey(key)
    {
        if constexpr (std::is_signed_v<Integer>) {
            type = Type::Signed;
            signedNumber = number;
        } else {
            type = Type::Unsigned;
            unsignedNumber = number;
        }
    }
    TraceArg(std::string_view key, double number) : argKey(key), type(Type::Real), real(number) {}
    TraceArg(std::string_view key, float number) : TraceArg(key, static_cast<double>(number)) {}

    std::string_view key() const { return argKey; }
    bool isNumber() const { return type != Type::Text && type != Type::Bool; }

private:
    friend class Timeline;
    enum class Type { Text, Bool, Signed, Unsigned, Real };

    std::string_view argKey;
    Type type = Type::Text;
    std::string_view text;
    bool flag = false;
    std::int64_t signedNumber = 0;
    std::uint64_t unsignedNumber = 0;
    double real = 0.0;
};

/// A view over the args of one call: an initializer list ({{"bytes", 64}, {"op", "read"}})
/// or a vector built at run time. Valid for the duration of the call.
class TraceArgs {
public:
    TraceArgs() = default;
    // The list's array lives until the end of the full expression of the call, which is as
    // long as a TraceArgs parameter is used.
    TraceArgs(std::initializer_list<TraceArg> args)
    {
        first = args.begin();
        count = args.size();
    }
    TraceArgs(const std::vector<TraceArg>& args) : first(args.data()), count(args.size()) {}

    const TraceArg* begin() const { return first; }
    const TraceArg* end() const { return first + count; }
    bool empty() const { return count == 0; }

private:
    const TraceArg* first = nullptr;
    std::size_t count = 0;
};

/// How viewers label time; the file itself is always in microseconds.
enum class DisplayTimeUnit { Nanoseconds, Milliseconds };

struct TimelineOptions {
    /// A batch is handed to the writer thread once it holds this many bytes (at least 1).
    std::size_t batchBytes = std::size_t{1} << 20;
    DisplayTimeUnit displayTimeUnit = DisplayTimeUnit::Nanoseconds;
    /// Only events in [windowStartPs, windowEndPs) of simulated time are written (ps): a slice
    /// that overlaps the window is clipped to it, instants, counter samples and flow ends
    /// outside it are dropped. Metadata (names) is always written.
    std::uint64_t windowStartPs = 0;
    std::uint64_t windowEndPs = std::numeric_limits<std::uint64_t>::max();
};

class Timeline {
public:
    /// Starts a temporary file beside `path` (kernel/AtomicFile.h) and writes the document
    /// header; close() renames it to `path`, so the file appears complete or not at all.
    /// Throws etsim::Error naming the path if it cannot be created, or for an empty window.
    explicit Timeline(std::string path, TimelineOptions options = {});
    /// Closes like close(), but never throws: errors are dropped (call close() to see them).
    ~Timeline();
    Timeline(const Timeline&) = delete;
    Timeline& operator=(const Timeline&) = delete;

    /// Names process `processId` (a rank) and orders it among processes by sortIndex.
    void processName(std::uint32_t processId, std::string_view name, std::int64_t sortIndex);
    /// Names thread `threadId` (a resource) of a process and orders it within the process.
    void threadName(std::uint32_t processId,
                    std::uint32_t threadId,
                    std::string_view name,
                    std::int64_t sortIndex);

    /// A slice ("ph":"X") on a thread from startPs for durationPs (both ps).
    void complete(std::uint32_t processId,
                  std::uint32_t threadId,
                  std::string_view name,
                  std::string_view category,
                  std::uint64_t startPs,
                  std::uint64_t durationPs,
                  TraceArgs args = {});
    /// A zero-length mark ("ph":"i", thread scope) at timePs (ps).
    void instant(std::uint32_t processId,
                 std::uint32_t threadId,
                 std::string_view name,
                 std::string_view category,
                 std::uint64_t timePs,
                 TraceArgs args = {});
    /// A counter sample ("ph":"C") of a process at timePs (ps): one track per series, each
    /// series a number. Throws etsim::Error if a series is not a number.
    void
    counter(std::uint32_t processId, std::string_view name, std::uint64_t timePs, TraceArgs series);
    /// Start of a flow arrow ("ph":"s"), bound to the slice enclosing timePs on the thread.
    /// name, category and flowId must match those of the flowEnd.
    void flowStart(std::uint32_t processId,
                   std::uint32_t threadId,
                   std::string_view name,
                   std::string_view category,
                   std::uint64_t flowId,
                   std::uint64_t timePs);
    /// End of a flow arrow ("ph":"f", "bp":"e"), bound to the slice enclosing timePs.
    void flowEnd(std::uint32_t processId,
                 std::uint32_t threadId,
                 std::string_view name,
                 std::string_view category,
                 std::uint64_t flowId,
                 std::uint64_t timePs);

    /// Appends `count` events another Timeline wrote, as TimelineEventReader reads them back
    /// (how a partitioned run gathers its processes' events into one file). They were
    /// filtered by their own timeline's window, not by this one's.
    void appendEvents(std::string_view text, std::uint64_t count);

    /// Writes everything recorded so far to the file (not yet a complete document) and
    /// waits until it is there. Throws etsim::Error if writing failed.
    void flush();
    /// Writes the rest, ends the document, closes the file and renames it into place; later
    /// calls do nothing. Throws etsim::Error naming the path and the reason if any write
    /// failed; the partial file is then removed.
    void close();

    const std::string& path() const { return filePath; }
    /// Events written so far, metadata included (events outside the window are not).
    std::uint64_t eventCount() const { return events; }
    /// Batches handed to the writer thread so far.
    std::uint64_t batchCount() const { return batches; }

private:
    std::string& beginEvent(std::string_view phase, std::string_view name, std::uint32_t processId);
    void endEvent();
    // A flow start ("s") or end ("f") event.
    void flowEvent(std::string_view phase,
                   std::uint32_t processId,
                   std::uint32_t threadId,
                   std::string_view name,
                   std::string_view category,
                   std::uint64_t flowId,
                   std::uint64_t timePs);
    void appendArgs(TraceArgs args);
    void handOff(bool waitUntilWritten);
    void writerLoop();
    void checkOpen() const;
    bool inWindow(std::uint64_t timePs) const
    {
        return timePs >= windowStart && timePs < windowEnd;
    }
    void throwIfFailed();
    // What a write error message adds about the temporary file.
    std::string removalNote() const;

    std::string filePath;
    std::size_t batchBytes;
    std::uint64_t windowStart;
    std::uint64_t windowEnd;
    std::unique_ptr<AtomicFile> output; // the temporary file, renamed over filePath at close()
    std::FILE* file = nullptr;          // a stdio stream on a duplicate of output's descriptor
    bool closed = false;
    std::uint64_t events = 0;
    std::uint64_t batches = 0;

    std::string filling; // the batch being formatted by the producer

    // Shared with the writer thread, guarded by `lock`.
    std::mutex lock;
    std::condition_variable changed;
    std::string writing; // the batch handed to the writer
    bool writePending = false;
    bool stopping = false;
    std::string failure; // first write error, empty while all is well
    std::thread writer;
};

/// Reads the events of a closed timeline file back in chunks of whole events, for
/// Timeline::appendEvents. Keeps one chunk in memory, whatever the file's size.
class TimelineEventReader {
public:
    struct Chunk {
        /// Whole events as the file holds them, separated by ",\n".
        std::string text;
        std::uint64_t count = 0;
    };

    /// Throws etsim::Error naming the path if it cannot be read or was not written (and
    /// closed) by a Timeline.
    explicit TimelineEventReader(const std::string& path);

    /// The next events, about `bytes` of them (more when one event is longer); an empty
    /// chunk once every event was read. Throws etsim::Error naming the path on a read error.
    Chunk next(std::size_t bytes);

private:
    std::string filePath;
    std::uint64_t remaining = 0; // bytes of events not read yet
    std::string carry;           // the start of an event the last chunk did not take
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> owner{nullptr, &std::fclose};
};

} // namespace etsim
