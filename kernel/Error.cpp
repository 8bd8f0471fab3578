#include "kernel/Error.h"

#include <sstream>
#include <utility>

namespace etsim {

namespace {

std::string locate(const std::string& file,
                   int line,
                   int column,
                   const std::string& keyPath,
                   const std::string& problem)
{
    std::ostringstream out;
    out << (file.empty() ? "<config>" : file);
    if (line > 0) {
        out << ':' << line;
        if (column > 0)
            out << ':' << column;
    }
    out << ": ";
    if (!keyPath.empty())
        out << keyPath << ": ";
    out << problem;
    return out.str();
}

} // namespace

ConfigError::ConfigError(
    std::string file, int line, int column, std::string keyPath, std::string problem)
    : Error(locate(file, line, column, keyPath, problem))
    , file_(std::move(file))
    , line_(line)
    , column_(column)
    , keyPath_(std::move(keyPath))
    , problem_(std::move(problem))
{
}

} // namespace etsim
