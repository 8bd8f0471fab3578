#include "platforms/partition/PartitionTimeline.h"

#include <cstring>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace etsim::platform {

namespace {

// Events a process sends to partition 0 in one round: large enough that the rounds cost
// little against the bytes, small enough to hold one per process at partition 0.
constexpr std::size_t chunkBytes = std::size_t{8} << 20;

// A ROUND of the gather: a byte that says whether the sender had events this round and, to
// partition 0 only, their count (8 bytes, little-endian) and their text.
std::vector<std::uint8_t> encodeChunk(const TimelineEventReader::Chunk& chunk)
{
    std::vector<std::uint8_t> bytes(1 + 8 + chunk.text.size());
    bytes[0] = 1;
    for (int at = 0; at < 8; ++at)
        bytes[1 + at] = static_cast<std::uint8_t>(chunk.count >> (8 * at));
    std::memcpy(bytes.data() + 9, chunk.text.data(), chunk.text.size());
    return bytes;
}

} // namespace

PartitionTimeline::PartitionTimeline(const TimelineSpec& spec, std::uint32_t self) : self(self)
{
    TimelineOptions options;
    options.windowStartPs = spec.startPs;
    options.windowEndPs = spec.endPs;
    std::string path = spec.path;
    if (self != 0) {
        std::error_code error;
        std::filesystem::path folder = std::filesystem::temp_directory_path(error);
        if (error)
            folder = ".";
        partPath = folder / ("etsim-timeline-" + std::to_string(::getpid()) + "-partition" +
                             std::to_string(self) + ".json");
        path = partPath.string();
    }
    own = std::make_unique<Timeline>(path, options);
}

PartitionTimeline::~PartitionTimeline()
{
    own.reset();
    if (!partPath.empty()) {
        std::error_code ignored;
        std::filesystem::remove(partPath, ignored);
    }
}

PartitionTimeline::Written PartitionTimeline::gather(PartitionTransport& transport,
                                                     std::uint64_t nowPs)
{
    std::unique_ptr<TimelineEventReader> reader;
    if (self != 0) {
        own->close();
        reader = std::make_unique<TimelineEventReader>(partPath.string());
    }
    const std::uint32_t partitions = transport.partitions();
    // Rounds until one in which no process had events left: every process sees every
    // other's flag, so all leave the loop in the same round.
    while (true) {
        TimelineEventReader::Chunk chunk;
        if (reader)
            chunk = reader->next(chunkBytes);
        const bool sent = chunk.count > 0;
        std::vector<std::vector<std::uint8_t>> outgoing(partitions);
        for (std::uint32_t peer = 0; peer < partitions; ++peer)
            if (peer != self)
                outgoing[peer] = peer == 0 && sent ? encodeChunk(chunk)
                                                   : std::vector<std::uint8_t>{std::uint8_t{sent}};
        const std::vector<std::vector<std::uint8_t>> incoming = transport.exchange(outgoing, nowPs);
        bool any = sent;
        for (std::uint32_t peer = 0; peer < partitions; ++peer) {
            if (peer == self)
                continue;
            const std::vector<std::uint8_t>& round = incoming[peer];
            if (round.empty() || round[0] > 1 || (self == 0 && round[0] == 1 && round.size() < 9))
                throw PartitionFailure("partition " + std::to_string(peer) +
                                       " sent a broken part of the timeline");
            any = any || round[0] == 1;
            if (self != 0 || round[0] == 0)
                continue;
            std::uint64_t count = 0;
            for (int at = 0; at < 8; ++at)
                count |= std::uint64_t{round[1 + at]} << (8 * at);
            own->appendEvents(
                std::string_view(reinterpret_cast<const char*>(round.data()) + 9, round.size() - 9),
                count);
        }
        if (!any)
            break;
    }
    if (self != 0) {
        reader.reset();
        own.reset();
        std::error_code ignored;
        std::filesystem::remove(partPath, ignored);
        return {};
    }
    own->close();
    std::error_code unknown;
    const std::uintmax_t bytes = std::filesystem::file_size(own->path(), unknown);
    return {own->eventCount(), unknown ? 0 : static_cast<std::uint64_t>(bytes)};
}

} // namespace etsim::platform
