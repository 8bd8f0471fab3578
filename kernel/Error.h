#pragma once
// Exceptions etsim's libraries throw for bad input. Library code never exits or aborts on
// input: it throws one of these before elaboration, or reports through SC_REPORT_ERROR
// during a run, so an embedding program decides what happens next.

#include <stdexcept>
#include <string>
#include <utility>

namespace etsim {

// Base of every etsim input error; what() is the full message a user sees.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A quantity that does not parse ("900 GBs"), with a message that says what was expected.
class UnitError : public Error {
public:
    using Error::Error;
};

// A configuration error located in a file: "platform.yaml:12:5: fabric.links[2].bandwidth: ...".
// line and column are 1-based; 0 means unknown (e.g. a key that is missing altogether).
class ConfigError : public Error {
public:
    ConfigError(std::string file, int line, int column, std::string keyPath, std::string problem);

    const std::string& file() const { return file_; }
    int line() const { return line_; }
    int column() const { return column_; }
    const std::string& keyPath() const { return keyPath_; }
    const std::string& problem() const { return problem_; }

private:
    std::string file_;
    int line_;
    int column_;
    std::string keyPath_;
    std::string problem_;
};

// A file that cannot be read as asked: missing, a folder, a FIFO or device, no permission.
// The command cannot start, whatever the file would have held (exit 2 in the etsim command,
// where a file that reads but holds wrong content is exit 1).
class FileAccessError : public ConfigError {
public:
    FileAccessError(std::string file, std::string problem)
        : ConfigError(std::move(file), 0, 0, "", std::move(problem))
    {
    }
};

// A run that ended with work nobody can ever do (a recv without its send, a collective a
// member never joins, a dependency cycle); what() lists the stuck work per rank.
class DeadlockError : public Error {
public:
    using Error::Error;
};

} // namespace etsim
