#include "kernel/HugePages.h"

#include <cstdlib>
#include <fstream>
#include <unistd.h>

// The environment is read and changed here only at start-up, before any thread exists
// (restartWithHugePages), or read while nothing changes it (heapHugePagesState).
// NOLINTBEGIN(concurrency-mt-unsafe)

namespace etsim {

namespace {

constexpr std::string_view tunablesVariable = "GLIBC_TUNABLES";
constexpr std::string_view hugeTlbTunable = "glibc.malloc.hugetlb";

// The value GLIBC_TUNABLES ("name=value:name=value") gives glibc.malloc.hugetlb, if any.
std::optional<std::string_view> hugeTlbValue(std::string_view tunables)
{
    while (!tunables.empty()) {
        const std::size_t end = tunables.find(':');
        const std::string_view pair = tunables.substr(0, end);
        const std::size_t equals = pair.find('=');
        if (equals != std::string_view::npos && pair.substr(0, equals) == hugeTlbTunable)
            return pair.substr(equals + 1);
        if (end == std::string_view::npos)
            break;
        tunables.remove_prefix(end + 1);
    }
    return std::nullopt;
}

bool optedOut()
{
    const char* value = std::getenv(hugePagesVariable);
    return value != nullptr && std::string_view(value) == "0";
}

// Valgrind runs its tools by preloading its own libraries into the program.
bool underValgrind()
{
    const char* preload = std::getenv("LD_PRELOAD");
    return preload != nullptr && std::string_view(preload).find("vgpreload") != std::string::npos;
}

} // namespace

std::optional<std::string> tunablesWithHugePages(const char* current)
{
    const std::string asked = std::string(hugeTlbTunable) + "=1";
    if (current == nullptr || *current == '\0')
        return asked;
    if (hugeTlbValue(current))
        return std::nullopt;
    return std::string(current) + ":" + asked;
}

std::string thpModeOf(std::string_view modeText)
{
    const std::size_t open = modeText.find('[');
    const std::size_t close = modeText.find(']', open);
    if (open == std::string_view::npos || close == std::string_view::npos)
        return {};
    return std::string(modeText.substr(open + 1, close - open - 1));
}

std::string thpMode()
{
    std::ifstream file(thpModeFile);
    std::string text;
    std::getline(file, text);
    return thpModeOf(text);
}

std::string heapHugePagesState()
{
    const char* tunables = std::getenv(tunablesVariable.data());
    if (tunables != nullptr) {
        if (const auto value = hugeTlbValue(tunables); value && *value != "0")
            return "asked (" + std::string(hugeTlbTunable) + "=" + std::string(*value) + ")";
    }
    const std::string mode = thpMode();
    if (mode.empty())
        return "not available (no transparent huge pages on this system)";
    if (mode == "always")
        return "given to every mapping (kernel mode always)";
    if (mode == "never")
        return "not available (kernel mode never)";
    if (optedOut())
        return std::string("not asked (") + hugePagesVariable + "=0)";
    return "not asked";
}

void restartWithHugePages(char** argv)
{
    if (optedOut() || underValgrind())
        return;
    if (thpMode() != "madvise")
        return;
    const char* before = std::getenv(tunablesVariable.data());
    const std::optional<std::string> tunables = tunablesWithHugePages(before);
    if (!tunables)
        return;
    const std::string saved = before != nullptr ? before : "";
    if (::setenv(tunablesVariable.data(), tunables->c_str(), 1) != 0)
        return;
    ::execv("/proc/self/exe", argv);
    // The exec failed (no /proc): run on without huge pages, with the environment as it was.
    if (before != nullptr)
        ::setenv(tunablesVariable.data(), saved.c_str(), 1);
    else
        ::unsetenv(tunablesVariable.data());
}

} // namespace etsim

// NOLINTEND(concurrency-mt-unsafe)
