#pragma once
// An output file that appears whole or not at all. Everything is written to a temporary file
// in the target's own folder (so the final rename never crosses file systems), and commit()
// renames it over the target. A write that fails (disk full, quota, file size limit) or an
// AtomicFile destroyed without commit() removes the temporary file: the target is never left
// partial, and a file that was there before stays as it was until the new one is complete.
//
// A target that is a device or a pipe (/dev/null, /dev/stdout, a FIFO) is written in place.
// A target that is a symbolic link is followed: the file it points to is replaced and the link
// stays, as with a plain open().
// The temporary file is created with mode 0666 less the umask, as a plain open() would, and
// is named ".<target name>.<random>.tmp" so a listing shows what it belongs to.
//
//     AtomicFile out("report.json");
//     out.write(text);                // or write through out.fd() / a dup of it
//     out.commit();                   // flush, fsync, close, rename; throws etsim::Error
//
// Errors are etsim::OutputError naming the target and giving the system's reason (errno text).

#include "kernel/Error.h"

#include <filesystem>
#include <string>
#include <string_view>

namespace etsim {

/// An output that could not be written: what() is "<path>: <problem>".
class OutputError : public Error {
public:
    OutputError(const std::string& path, std::string problem)
        : Error(path + ": " + problem), problemText(std::move(problem))
    {
    }
    /// The reason without the path ("write failed: No space left on device; ...").
    const std::string& problem() const { return problemText; }

private:
    std::string problemText;
};

class AtomicFile {
public:
    /// Creates the temporary file beside `target`. Throws etsim::Error naming the target and
    /// the reason when the folder is missing or not writable.
    explicit AtomicFile(std::filesystem::path target);
    /// Removes the temporary file unless commit() succeeded; never throws.
    ~AtomicFile();
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    /// The open descriptor of the temporary file (owned here: duplicate it to hand it to a
    /// stream that closes what it is given).
    int fd() const { return descriptor; }
    const std::filesystem::path& target() const { return targetPath; }
    const std::filesystem::path& temporary() const { return tempPath; }
    /// True for a device or pipe target (/dev/null, a FIFO), written in place: there is no
    /// temporary file and no rename.
    bool inPlace() const { return tempPath.empty(); }

    /// Appends bytes; on failure removes the temporary file and throws etsim::Error.
    void write(std::string_view bytes);
    /// Makes the data durable (fsync), closes and renames the temporary file over the target.
    /// On failure removes the temporary file and throws etsim::Error with the reason.
    void commit();
    /// Removes the temporary file and throws etsim::Error "<target>: <what> failed: <reason>"
    /// for a failure the caller saw on its own stream (errno `code`).
    [[noreturn]] void fail(const std::string& what, int code);
    /// Removes the temporary file (the target is untouched); never throws.
    void abandon() noexcept;

private:
    std::filesystem::path targetPath;
    std::filesystem::path tempPath;
    int descriptor = -1;
    bool done = false;
};

/// Writes `bytes` to `target` through an AtomicFile. Throws etsim::Error with the reason.
void writeFileAtomically(const std::filesystem::path& target, std::string_view bytes);

/// Checks, without leaving anything behind, that a file can be created at `target`: creates
/// and removes a temporary file in its folder. Returns the problem ("<target>: cannot create:
/// Permission denied ..."), or an empty string when the file can be written. A target that is
/// a folder is a problem too.
std::string checkWritable(const std::filesystem::path& target);

/// The system's text for errno `code` ("No space left on device").
std::string errnoText(int code);

} // namespace etsim
