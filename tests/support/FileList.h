#pragma once
// The files of one folder whose names start with a prefix, in name order: how tests and
// benchmarks pick the per-rank files of a shared trace ("worker0...", "dlrm_eg_0..."). Header
// only, so benchmarks use it without linking the test support library.

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace etsim::test {

inline std::vector<std::filesystem::path> filesStartingWith(const std::filesystem::path& dir,
                                                            const std::string& start)
{
    std::vector<std::filesystem::path> out;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.path().filename().string().rfind(start, 0) == 0)
            out.push_back(entry.path());
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace etsim::test
