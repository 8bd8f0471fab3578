#include "importers/pytorch/JsonFile.h"

#include "et_driver/InflateInputStream.h"
#include "kernel/Error.h"
#include "kernel/InputFile.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace etsim::importers::pytorch {

namespace {

// Closes the descriptor on every path out of readJsonFile.
struct FileDescriptor {
    int fd = -1;
    ~FileDescriptor()
    {
        if (fd >= 0)
            ::close(fd);
    }
};

std::string readAllText(const std::filesystem::path& file)
{
    FileDescriptor in{::open(file.c_str(), O_RDONLY | O_CLOEXEC)};
    if (in.fd < 0)
        throw Error(file.string() + ": cannot open for reading (check the path and permissions)");
    unsigned char magic[2] = {0, 0};
    ssize_t got = ::pread(in.fd, magic, 2, 0);
    bool gzip = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
    google::protobuf::io::FileInputStream raw(in.fd, 1 << 16);
    std::string text;
    // Size the buffer once: the file size, or for gzip the uncompressed size its trailer gives
    // (modulo 4 GiB, so only a hint).
    struct stat info {};
    if (::fstat(in.fd, &info) == 0 && info.st_size > 0) {
        auto size = static_cast<std::size_t>(info.st_size);
        unsigned char trailer[4] = {0, 0, 0, 0};
        if (gzip && size >= 4 && ::pread(in.fd, trailer, 4, info.st_size - 4) == 4)
            size = static_cast<std::size_t>(trailer[0]) |
                   static_cast<std::size_t>(trailer[1]) << 8 |
                   static_cast<std::size_t>(trailer[2]) << 16 |
                   static_cast<std::size_t>(trailer[3]) << 24;
        text.reserve(std::min<std::size_t>(size + 1, std::size_t(1) << 32));
    }
    if (!gzip) {
        const void* data = nullptr;
        int size = 0;
        while (raw.Next(&data, &size))
            text.append(static_cast<const char*>(data), static_cast<std::size_t>(size));
        if (raw.GetErrno() != 0)
            throw Error(file.string() + ": read error (errno " + std::to_string(raw.GetErrno()) +
                        ")");
        return text;
    }
    et::InflateInputStream inflated(&raw, 1 << 16);
    const void* data = nullptr;
    int size = 0;
    while (inflated.Next(&data, &size))
        text.append(static_cast<const char*>(data), static_cast<std::size_t>(size));
    if (!inflated.error().empty())
        throw Error(file.string() + ": gzip stream after " + std::to_string(text.size()) +
                    " bytes of JSON: " + inflated.error() + "; re-copy or recapture the file");
    return text;
}

} // namespace

void failJson(const std::string& text,
              std::size_t byte,
              const std::string& what,
              const std::string& file)
{
    std::size_t at = std::min<std::size_t>(byte, text.size());
    std::size_t line = 1 + static_cast<std::size_t>(std::count(
                               text.begin(), text.begin() + static_cast<long>(at), '\n'));
    bool atEnd = byte >= text.size();
    throw Error(file + ": line " + std::to_string(line) + ": not valid JSON (" + what + ")" +
                (atEnd ? "; the file ends early: it is truncated, re-copy or recapture it"
                       : "; the file is corrupt or not a PyTorch/Kineto JSON trace"));
}

nlohmann::json parseJsonText(const std::string& text, const std::string& file)
{
    std::size_t first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        throw Error(file + ": empty file; the trace was not written completely, recapture it");
    if (text[first] != '{' && text[first] != '[')
        throw Error(file + ": not a JSON document (a Chakra protobuf trace? Those need no "
                           "import: `etsim run` and `etsim trace validate` read them)");
    try {
        return etsim::parseJson(text, file);
    } catch (const JsonSyntaxError& e) {
        if (e.byte() > 0)
            failJson(text, e.byte(), e.libraryMessage(), file);
        // A number beyond double's range has no position.
        throw Error(file + ": not valid JSON (" + e.libraryMessage() +
                    "); the file is corrupt or not a PyTorch/Kineto JSON trace");
    }
}

std::string readTextFile(const std::filesystem::path& file)
{
    return readAllText(file);
}

nlohmann::json readJsonFile(const std::filesystem::path& file)
{
    return parseJsonText(readAllText(file), file.string());
}

} // namespace etsim::importers::pytorch
