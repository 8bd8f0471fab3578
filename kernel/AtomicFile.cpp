#include "kernel/AtomicFile.h"

#include "kernel/Error.h"

#include <cerrno>
#include <fcntl.h>
#include <random>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace etsim {

namespace {

namespace fs = std::filesystem;

constexpr int createAttempts = 64;

// The kind of an existing target that is not a regular file, or nullptr.
const char* specialKind(const fs::path& target)
{
    struct stat info {};
    if (::stat(target.c_str(), &info) != 0 || S_ISREG(info.st_mode))
        return nullptr;
    if (S_ISDIR(info.st_mode))
        return "folder";
    return "special";
}

// The file a chain of symbolic links ends at (the link's own path when it is none, or when the
// chain loops): the rename then replaces that file, and the links keep pointing at it, as a
// plain open() and write would leave them.
fs::path followLinks(fs::path path)
{
    constexpr int maxLinks = 40; // as the kernel's own limit (ELOOP)
    for (int hop = 0; hop < maxLinks; ++hop) {
        std::error_code error;
        if (!fs::is_symlink(path, error))
            return path;
        fs::path next = fs::read_symlink(path, error);
        if (error)
            return path;
        path = next.is_absolute() ? next : path.parent_path() / next;
    }
    return path;
}

} // namespace

std::string errnoText(int code)
{
    return std::error_code(code, std::generic_category()).message();
}

AtomicFile::AtomicFile(fs::path target) : targetPath(followLinks(std::move(target)))
{
    const char* kind = specialKind(targetPath);
    if (kind != nullptr && std::string_view(kind) == "folder")
        throw OutputError(targetPath.string(), "is a folder; give a file name");
    if (kind != nullptr) {
        // A device or a pipe (/dev/null, /dev/stdout, a FIFO) cannot be replaced by a rename:
        // write to it directly, there is no partial file to leave behind.
        descriptor = ::open(targetPath.c_str(), O_WRONLY | O_CLOEXEC);
        if (descriptor < 0) {
            const int code = errno;
            throw OutputError(targetPath.string(), "cannot open for writing: " + errnoText(code));
        }
        return;
    }
    const fs::path folder = targetPath.has_parent_path() ? targetPath.parent_path() : fs::path(".");
    std::random_device seed;
    std::mt19937_64 random((static_cast<std::uint64_t>(seed()) << 32) ^ seed() ^
                           static_cast<std::uint64_t>(::getpid()));
    int code = 0;
    for (int attempt = 0; attempt < createAttempts; ++attempt) {
        tempPath = folder / ("." + targetPath.filename().string() + "." +
                             std::to_string(random() % 1000000000) + ".tmp");
        descriptor = ::open(tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (descriptor >= 0)
            return;
        code = errno;
        if (code != EEXIST)
            break;
    }
    tempPath.clear();
    throw OutputError(targetPath.string(),
                      "cannot create: " + errnoText(code) +
                          " (check that the folder exists and is writable)");
}

AtomicFile::~AtomicFile()
{
    abandon();
}

void AtomicFile::abandon() noexcept
{
    if (descriptor >= 0)
        ::close(descriptor);
    descriptor = -1;
    if (!done && !tempPath.empty())
        ::unlink(tempPath.c_str());
    done = true;
}

void AtomicFile::fail(const std::string& what, int code)
{
    abandon();
    std::string text = what + " failed: " + errnoText(code);
    if (!tempPath.empty())
        text += "; the partial file was removed";
    throw OutputError(targetPath.string(), text);
}

void AtomicFile::write(std::string_view bytes)
{
    if (done)
        throw OutputError(targetPath.string(), "write after the file was committed or abandoned");
    while (!bytes.empty()) {
        const ssize_t written = ::write(descriptor, bytes.data(), bytes.size());
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            fail("write", written < 0 ? errno : ENOSPC);
        bytes.remove_prefix(static_cast<std::size_t>(written));
    }
}

void AtomicFile::commit()
{
    if (done)
        throw OutputError(targetPath.string(), "committed twice or after a failure");
    if (tempPath.empty()) { // a device or pipe written in place
        const int closed = ::close(descriptor);
        const int code = errno;
        descriptor = -1;
        done = true;
        if (closed != 0 && code != EINTR)
            throw OutputError(targetPath.string(), "close failed: " + errnoText(code));
        return;
    }
    // Delayed allocation can report a full disk only here, so fsync and close are checked.
    if (::fsync(descriptor) != 0 && errno != EINVAL)
        fail("write", errno);
    const int closed = ::close(descriptor);
    descriptor = -1;
    if (closed != 0 && errno != EINTR)
        fail("close", errno);
    if (::rename(tempPath.c_str(), targetPath.c_str()) != 0)
        fail("rename of " + tempPath.filename().string(), errno);
    done = true;
}

void writeFileAtomically(const fs::path& target, std::string_view bytes)
{
    AtomicFile file(target);
    file.write(bytes);
    file.commit();
}

std::string checkWritable(const fs::path& target)
{
    // Opening a FIFO for writing would wait for a reader: ask for permission instead.
    const char* kind = specialKind(target);
    if (kind != nullptr && std::string_view(kind) == "special")
        return ::access(target.c_str(), W_OK) == 0
                   ? std::string()
                   : target.string() + ": cannot open for writing: " + errnoText(errno);
    try {
        AtomicFile probe(target);
        probe.abandon();
    } catch (const Error& error) {
        return error.what();
    }
    return {};
}

} // namespace etsim
