#pragma once
// Opening input files the same way in every reader: only regular files are read (a FIFO would
// block the open, a device would never end), and every refusal says what the path really is.

#include <nlohmann/json.hpp>

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

/// A JSON file parsed within the nesting limit of kernel/InputLimits.h. Throws FileAccessError
/// when it cannot be read, etsim::Error ("<path>: not valid JSON: ...") when it does not parse.
nlohmann::json readJsonFile(const std::filesystem::path& path, std::string_view expected);

} // namespace etsim
