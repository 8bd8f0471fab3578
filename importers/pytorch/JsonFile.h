#pragma once
// Reads one JSON document from a plain or gzip-compressed file (detected by content). A file
// that is not valid JSON, truncated or corrupt gives an etsim::Error naming the file and the
// line where parsing stopped.

#include <nlohmann/json.hpp>

#include <filesystem>

namespace etsim::importers::pytorch {

nlohmann::json readJsonFile(const std::filesystem::path& file);

// The same from text already in memory; `file` names it in errors.
nlohmann::json parseJsonText(const std::string& text, const std::string& file);

// The whole file as text, gunzipped when it is gzip. Throws etsim::Error naming the file.
std::string readTextFile(const std::filesystem::path& file);

// The error for JSON text that does not parse at byte `byte` (line, truncated or corrupt).
[[noreturn]] void failJson(const std::string& text,
                           std::size_t byte,
                           const std::string& what,
                           const std::string& file);

} // namespace etsim::importers::pytorch
