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

} // namespace etsim::importers::pytorch
