#include "tests/support/SharedTraces.h"

#include <cstdlib>
#include <system_error>

namespace etsim::test {

namespace {

std::optional<std::filesystem::path> sharedFolder(const char* variable, const char* name)
{
    std::filesystem::path dir;
    if (const char* env = std::getenv(variable); env != nullptr && *env != '\0')
        dir = env;
    else if (const char* source = std::getenv("ETSIM_SOURCE_DIR"); source != nullptr)
        dir = std::filesystem::path(source) / ".." / "shared" / name;
    else
        return std::nullopt;
    std::error_code error;
    if (!std::filesystem::is_directory(dir, error))
        return std::nullopt;
    return dir;
}

} // namespace

std::optional<std::filesystem::path> sharedTraces()
{
    return sharedFolder("ETSIM_TRACES", "traces");
}

std::optional<std::filesystem::path> sharedReference()
{
    return sharedFolder("ETSIM_REFERENCE", "reference");
}

} // namespace etsim::test
