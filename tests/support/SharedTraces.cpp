#include "tests/support/SharedTraces.h"

#include <cstdlib>
#include <system_error>

namespace etsim::test {

std::optional<std::filesystem::path> sharedTraces()
{
    std::filesystem::path dir;
    if (const char* env = std::getenv("ETSIM_TRACES"); env != nullptr && *env != '\0')
        dir = env;
    else if (const char* source = std::getenv("ETSIM_SOURCE_DIR"); source != nullptr)
        dir = std::filesystem::path(source) / ".." / "shared" / "traces";
    else
        return std::nullopt;
    std::error_code error;
    if (!std::filesystem::is_directory(dir, error))
        return std::nullopt;
    return dir;
}

} // namespace etsim::test
