#pragma once
// A temporary folder that is removed, with everything in it, when the test ends.

#include <filesystem>
#include <string>

namespace etsim::test {

class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::filesystem::path& path() const { return root; }
    std::filesystem::path file(const std::string& name) const { return root / name; }
    // Writes text to a file in the folder and returns its path.
    std::filesystem::path write(const std::string& name, const std::string& contents) const;

private:
    std::filesystem::path root;
};

// Reads a whole file; fails the calling test when it cannot.
std::string readFile(const std::filesystem::path& path);

} // namespace etsim::test
