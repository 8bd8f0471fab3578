#pragma once
// Helpers the libFuzzer targets share: the input as an in-memory file, so a reader runs its
// real open/read path without touching disk, and the input split into two parts.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <sys/mman.h>
#include <unistd.h>

namespace etsim::fuzz {

/// The bytes as a file at path() ("/proc/self/fd/N"); closed when destroyed.
class MemoryFile {
public:
    MemoryFile(const std::uint8_t* data, std::size_t size)
        : fd(memfd_create("etsim-fuzz", MFD_CLOEXEC))
    {
        std::size_t written = 0;
        while (fd >= 0 && written < size) {
            const ssize_t n = ::write(fd, data + written, size - written);
            if (n <= 0) {
                ::close(fd);
                fd = -1;
                return;
            }
            written += static_cast<std::size_t>(n);
        }
    }
    ~MemoryFile()
    {
        if (fd >= 0)
            ::close(fd);
    }
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;

    bool ok() const { return fd >= 0; }
    std::string path() const { return "/proc/self/fd/" + std::to_string(fd); }

private:
    int fd;
};

/// The input up to the first `separator`, and the rest (empty head when there is none).
inline std::pair<std::string_view, std::string_view>
splitAt(const std::uint8_t* data, std::size_t size, std::string_view separator)
{
    const std::string_view all(reinterpret_cast<const char*>(data), size);
    const std::size_t at = all.find(separator);
    if (at == std::string_view::npos)
        return {std::string_view(), all};
    return {all.substr(0, at), all.substr(at + separator.size())};
}

} // namespace etsim::fuzz
