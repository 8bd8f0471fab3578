// AtomicFile: the target appears complete or not at all, and a failed write says why and
// leaves nothing behind. A full disk is made real in a child process: a 16 KiB tmpfs in a
// private mount namespace when the system allows one, and always a file size limit
// (RLIMIT_FSIZE), which needs no privilege.

#include "kernel/AtomicFile.h"

#include "tests/support/TempDir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace etsim {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> listing(const fs::path& folder)
{
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string errorOf(const std::function<void()>& action)
{
    try {
        action();
    } catch (const Error& error) {
        return error.what();
    }
    return "(no error)";
}

// Runs `body` in a child process and returns its exit code; the child's checks report on
// stderr. Exit code 77 means "cannot set up here" (the caller skips).
int inChild(const std::function<int()>& body)
{
    const pid_t child = ::fork();
    if (child == 0)
        ::_exit(body());
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(AtomicFile, TheTargetChangesOnlyAtCommit)
{
    test::TempDir dir;
    const fs::path target = dir.write("out.json", "old");
    AtomicFile file(target);
    file.write("new contents");
    EXPECT_EQ(test::readFile(target), "old");
    ASSERT_EQ(listing(dir.path()).size(), 2U);
    EXPECT_EQ(file.temporary().parent_path(), target.parent_path());
    file.commit();
    EXPECT_EQ(test::readFile(target), "new contents");
    EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"out.json"});
}

TEST(AtomicFile, AnAbandonedFileLeavesTheOldTargetAndNoTemporary)
{
    test::TempDir dir;
    const fs::path target = dir.write("out.json", "old");
    {
        AtomicFile file(target);
        file.write("half");
    }
    EXPECT_EQ(test::readFile(target), "old");
    EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"out.json"});
}

TEST(AtomicFile, TheNewFileHasTheModeAPlainOpenWouldGive)
{
    test::TempDir dir;
    const mode_t mask = ::umask(022);
    writeFileAtomically(dir.file("a"), "x");
    ::umask(mask);
    EXPECT_EQ(fs::status(dir.file("a")).permissions(),
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                  fs::perms::others_read);
}

TEST(AtomicFile, MissingFolderAndFolderTargetsAreRefusedWithTheReason)
{
    test::TempDir dir;
    EXPECT_EQ(errorOf([&] { AtomicFile file(dir.file("no/such/x.json")); }),
              dir.file("no/such/x.json").string() +
                  ": cannot create: No such file or directory (check that the folder exists and "
                  "is writable)");
    EXPECT_EQ(errorOf([&] { AtomicFile file(dir.path()); }),
              dir.path().string() + ": is a folder; give a file name");
    EXPECT_EQ(checkWritable(dir.file("fine.json")), "");
    EXPECT_EQ(listing(dir.path()), std::vector<std::string>{});
    EXPECT_NE(checkWritable(dir.file("no/x.json")).find("No such file or directory"),
              std::string::npos);
}

// A report path that is a link (report.json -> runs/42.json) writes the file it points to,
// through a chain of links and to a target that does not exist yet; the links stay links.
TEST(AtomicFile, SymbolicLinksAreFollowedAndKept)
{
    test::TempDir dir;
    fs::create_directory(dir.file("runs"));
    const fs::path old = dir.write("runs/41.json", "old");
    fs::create_symlink("runs/41.json", dir.file("report.json"));
    fs::create_symlink("report.json", dir.file("latest.json"));
    writeFileAtomically(dir.file("latest.json"), "new");
    EXPECT_TRUE(fs::is_symlink(dir.file("latest.json")));
    EXPECT_TRUE(fs::is_symlink(dir.file("report.json")));
    EXPECT_EQ(test::readFile(old), "new");
    EXPECT_EQ(listing(dir.file("runs")), std::vector<std::string>{"41.json"});

    fs::create_symlink("runs/42.json", dir.file("next.json")); // dangling until written
    writeFileAtomically(dir.file("next.json"), "fresh");
    EXPECT_TRUE(fs::is_symlink(dir.file("next.json")));
    EXPECT_EQ(test::readFile(dir.file("runs/42.json")), "fresh");

    // A loop cannot be followed: it is replaced as the plain file it names.
    fs::create_symlink("loop.json", dir.file("loop.json"));
    writeFileAtomically(dir.file("loop.json"), "x");
    EXPECT_EQ(test::readFile(dir.file("loop.json")), "x");
}

TEST(AtomicFile, DevicesAreWrittenInPlace)
{
    if (!fs::exists("/dev/full"))
        GTEST_SKIP() << "/dev/full is needed to make writes fail";
    writeFileAtomically("/dev/null", "discarded");
    EXPECT_EQ(errorOf([] { writeFileAtomically("/dev/full", "x"); }),
              "/dev/full: write failed: No space left on device");
    EXPECT_EQ(checkWritable("/dev/null"), "");
}

TEST(AtomicFile, AFileSizeLimitFailsTheWriteAndRemovesThePartialFile)
{
    test::TempDir dir;
    const fs::path target = dir.write("big.bin", "old");
    const int code = inChild([&] {
        ::signal(SIGXFSZ, SIG_IGN); // the write then fails with EFBIG instead of killing us
        rlimit limit{4096, 4096};
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0)
            return 77;
        const std::string error =
            errorOf([&] { writeFileAtomically(target, std::string(65536, 'x')); });
        const std::string expected = target.string() +
                                     ": write failed: File too large; the partial file was "
                                     "removed";
        if (error != expected) {
            std::fprintf(stderr, "got: %s\n", error.c_str());
            return 1;
        }
        return 0;
    });
    ASSERT_NE(code, 77) << "setrlimit(RLIMIT_FSIZE) failed";
    EXPECT_EQ(code, 0);
    EXPECT_EQ(test::readFile(target), "old");
    EXPECT_EQ(listing(dir.path()), std::vector<std::string>{"big.bin"});
}

TEST(AtomicFile, AFullDiskFailsTheWriteAndRemovesThePartialFile)
{
    test::TempDir dir;
    const fs::path mountPoint = dir.file("small");
    fs::create_directory(mountPoint);
    const int code = inChild([&] {
        // A private mount namespace (and, unprivileged, a user namespace) for a 16 KiB tmpfs.
        const int flags = ::geteuid() == 0 ? CLONE_NEWNS : CLONE_NEWNS | CLONE_NEWUSER;
        if (::unshare(flags) != 0 ||
            ::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("tmpfs", mountPoint.c_str(), "tmpfs", 0, "size=16k") != 0)
            return 77;
        const fs::path target = mountPoint / "report.json";
        const std::string error =
            errorOf([&] { writeFileAtomically(target, std::string(1 << 20, 'x')); });
        const std::string expected = target.string() +
                                     ": write failed: No space left on device; the partial "
                                     "file was removed";
        if (error != expected) {
            std::fprintf(stderr, "got: %s\n", error.c_str());
            return 1;
        }
        if (!listing(mountPoint).empty()) {
            std::fprintf(stderr, "a file was left in the full folder\n");
            return 2;
        }
        return 0;
    });
    if (code == 77)
        GTEST_SKIP() << "no private mount namespace here (unshare or mount refused)";
    EXPECT_EQ(code, 0);
}

} // namespace
} // namespace etsim
