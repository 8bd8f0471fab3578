#include "kernel/Log.h"

#include "kernel/Error.h"

#include <array>
#include <iostream>
#include <utility>

namespace etsim {

namespace {

constexpr std::array<std::pair<std::string_view, LogLevel>, 6> levelNames{{
    {"trace", LogLevel::Trace},
    {"debug", LogLevel::Debug},
    {"info", LogLevel::Info},
    {"warn", LogLevel::Warn},
    {"error", LogLevel::Error},
    {"off", LogLevel::Off},
}};

LogSink streamSink(std::ostream& out)
{
    return [&out](LogLevel level, std::string_view logger, std::string_view line) {
        out << '[' << logLevelName(level) << "] " << logger << ": " << line << '\n';
    };
}

bool coversName(const std::string& parent, const std::string& name)
{
    return name == parent ||
           (name.size() > parent.size() && name.compare(0, parent.size(), parent) == 0 &&
            name[parent.size()] == '.');
}

} // namespace

std::optional<LogLevel> parseLogLevel(std::string_view text)
{
    for (const auto& [name, level] : levelNames)
        if (name == text)
            return level;
    return std::nullopt;
}

const char* logLevelName(LogLevel level)
{
    for (const auto& [name, value] : levelNames)
        if (value == level)
            return name.data();
    return "?";
}

Logger::Logger(std::string name, LogLevel level, const LogSink* sink)
    : name_(std::move(name)), level_(level), sink(sink)
{
}

LogRegistry::LogRegistry() : LogRegistry(std::cerr) {}

LogRegistry::LogRegistry(std::ostream& out) : sink(streamSink(out)) {}

LogRegistry::LogRegistry(LogSink sink) : sink(std::move(sink)) {}

Logger& LogRegistry::get(const std::string& name)
{
    auto found = loggers.find(name);
    if (found != loggers.end())
        return *found->second;
    auto logger = std::make_unique<Logger>(name, levelFor(name), &sink);
    return *loggers.emplace(name, std::move(logger)).first->second;
}

LogLevel LogRegistry::levelFor(const std::string& name) const
{
    // The most specific explicit level wins: "a.b.c" looks for "a.b.c", then "a.b", then "a".
    std::string candidate = name;
    while (true) {
        auto found = explicitLevels.find(candidate);
        if (found != explicitLevels.end())
            return found->second;
        auto dot = candidate.rfind('.');
        if (dot == std::string::npos)
            return fallback;
        candidate.resize(dot);
    }
}

void LogRegistry::setLevel(const std::string& name, LogLevel level)
{
    if (name == "*")
        fallback = level;
    else
        explicitLevels[name] = level;
    for (auto& [loggerName, logger] : loggers)
        if (name == "*" || coversName(name, loggerName))
            logger->setLevel(levelFor(loggerName));
}

void LogRegistry::configure(std::string_view spec)
{
    while (!spec.empty()) {
        auto comma = spec.find(',');
        std::string_view part = spec.substr(0, comma);
        spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
        if (part.empty())
            continue;
        auto equals = part.find('=');
        std::string name =
            equals == std::string_view::npos ? "*" : std::string(part.substr(0, equals));
        std::string_view levelText =
            equals == std::string_view::npos ? part : part.substr(equals + 1);
        auto level = parseLogLevel(levelText);
        if (!level || name.empty())
            throw Error("log level \"" + std::string(part) +
                        "\": expected LEVEL or LOGGER=LEVEL with LEVEL one of trace, debug, "
                        "info, warn, error, off");
        setLevel(name, *level);
    }
}

} // namespace etsim
