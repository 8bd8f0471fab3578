#pragma once
// Named loggers per subsystem ("et_driver", "hbm", "cosim.bridge", ...) with levels set from
// the command line or config. A LogRegistry is owned by whoever runs the simulation (the
// Simulation facade, a test, a tool); there is no global logger. Nothing below the
// registry's level is formatted, so a disabled debug line costs one comparison.
//
// Fatal conditions do not go through here: they are raised with SC_REPORT_ERROR/FATAL so an
// embedding program's report handler sees them.

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace etsim {

enum class LogLevel { Trace, Debug, Info, Warn, Error, Off };

// "trace", "debug", "info", "warn", "error", "off"; nullopt for anything else.
std::optional<LogLevel> parseLogLevel(std::string_view text);
const char* logLevelName(LogLevel level);

// Where formatted lines go. The default sink writes to a std::ostream (stderr by default).
using LogSink = std::function<void(LogLevel level, std::string_view logger, std::string_view line)>;

class Logger {
public:
    Logger(std::string name, LogLevel level, const LogSink* sink);

    const std::string& name() const { return name_; }
    LogLevel level() const { return level_; }
    void setLevel(LogLevel level) { level_ = level; }
    bool enabled(LogLevel level) const { return level >= level_ && level != LogLevel::Off; }

    template <typename... Parts>
    void log(LogLevel level, const Parts&... parts) const
    {
        if (!enabled(level))
            return;
        std::ostringstream line;
        (line << ... << parts);
        (*sink)(level, name_, line.str());
    }
    template <typename... Parts>
    void trace(const Parts&... parts) const
    {
        log(LogLevel::Trace, parts...);
    }
    template <typename... Parts>
    void debug(const Parts&... parts) const
    {
        log(LogLevel::Debug, parts...);
    }
    template <typename... Parts>
    void info(const Parts&... parts) const
    {
        log(LogLevel::Info, parts...);
    }
    template <typename... Parts>
    void warn(const Parts&... parts) const
    {
        log(LogLevel::Warn, parts...);
    }
    template <typename... Parts>
    void error(const Parts&... parts) const
    {
        log(LogLevel::Error, parts...);
    }

private:
    std::string name_;
    LogLevel level_;
    const LogSink* sink;
};

class LogRegistry {
public:
    // Warnings and errors are shown unless asked otherwise; info and below only on request.
    static constexpr LogLevel defaultLevel = LogLevel::Warn;

    // Lines go to `out` as "[level] logger: message" (stderr when not given).
    LogRegistry();
    explicit LogRegistry(std::ostream& out);
    explicit LogRegistry(LogSink sink);
    LogRegistry(const LogRegistry&) = delete;
    LogRegistry& operator=(const LogRegistry&) = delete;

    // The logger of a subsystem, created on first use. A name "a.b" inherits the level set
    // for "a" unless "a.b" has its own.
    Logger& get(const std::string& name);

    // Sets the level of one logger and its children ("hbm" covers "hbm.channel0"); "*" sets
    // the default for every logger without a level of its own.
    void setLevel(const std::string& name, LogLevel level);

    // Applies a spec such as "info" or "warn,et_driver=debug,cosim=trace" (from --log or a
    // config file). Throws etsim::Error naming the bad part and the allowed levels.
    void configure(std::string_view spec);

private:
    LogLevel levelFor(const std::string& name) const;

    LogSink sink;
    LogLevel fallback = defaultLevel;
    std::map<std::string, LogLevel> explicitLevels;
    std::map<std::string, std::unique_ptr<Logger>> loggers;
};

} // namespace etsim
