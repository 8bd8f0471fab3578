#pragma once
// Opening input files the same way in every reader: only regular files are read (a FIFO would
// block the open, a device would never end), and every refusal says what the path really is.
// Parsing JSON text the same way in every reader: within the nesting limit, and every error of
// the JSON library (a syntax error, a number beyond double's range, ...) as JsonSyntaxError.

#include "kernel/Error.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace etsim {

/// "a folder", "a FIFO (named pipe)", "a character device", ... for messages about a path that
/// is not a regular file.
std::string fileTypeText(std::filesystem::file_type type);

/// Throws FileAccessError unless `path` names a regular file (after following links):
/// "<path>: cannot read: is a folder, expected <expected>".
void requireRegularFile(const std::filesystem::path& path, std::string_view expected);

/// The whole content of a regular file. Throws FileAccessError (naming the path and the reason:
/// missing, a folder, a FIFO or device, errno of a failed open or read).
std::string readTextFile(const std::filesystem::path& path, std::string_view expected);

/// A JSON text that does not parse. what(): "<source>: not valid JSON: <libraryMessage()>";
/// readers that know more about their file (a node, a key, the fix) build their own message
/// from the parts.
class JsonSyntaxError : public Error {
public:
    /// `byte`: the 1-based offset in `text` where parsing stopped; 0 when the error has no place
    /// (a number beyond double's range).
    JsonSyntaxError(std::string source,
                    std::string_view text,
                    std::size_t byte,
                    std::string libraryMessage,
                    bool syntax);

    const std::string& source() const { return source_; }
    /// 1-based offset where parsing stopped, 0 when unknown.
    std::size_t byte() const { return byte_; }
    /// 1-based line of that byte in the text, 0 when unknown.
    std::uint64_t line() const { return line_; }
    /// True when parsing reached the end of the text: it is truncated.
    bool endsEarly() const { return endsEarly_; }
    /// The JSON library's own message, e.g. "[json.exception.parse_error.101] parse error at
    /// line 1, column 9: syntax error while parsing value - invalid literal; last read: 'x'".
    const std::string& libraryMessage() const { return libraryMessage_; }
    /// That message without the library's prefix and position ("syntax error while parsing
    /// ..."), for a message that gives the place itself; the whole message for other errors.
    std::string reason() const;

private:
    std::string source_;
    std::size_t byte_;
    std::uint64_t line_;
    bool endsEarly_;
    std::string libraryMessage_;
    bool syntax_;
};

/// `text` parsed as JSON. Throws etsim::Error ("<source>: line N: nested deeper than ...") when
/// it nests deeper than kernel/InputLimits.h allows (checked before parsing: the library and
/// error printers recurse per level), JsonSyntaxError naming `source` when it does not parse.
nlohmann::json parseJson(std::string_view text, const std::string& source);

/// The same, keeping the order of the keys of every object (the trace JSON forms).
nlohmann::ordered_json parseOrderedJson(std::string_view text, const std::string& source);

/// A JSON file read (readTextFile) and parsed (parseJson). Throws FileAccessError when it
/// cannot be read, etsim::Error ("<path>: not valid JSON: ...") when it does not parse.
nlohmann::json readJsonFile(const std::filesystem::path& path, std::string_view expected);

} // namespace etsim
