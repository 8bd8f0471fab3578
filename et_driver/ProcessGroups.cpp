#include "et_driver/ProcessGroups.h"

#include "kernel/Error.h"
#include "kernel/InputFile.h"
#include "kernel/InputLimits.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>

namespace etsim::et {

bool isDefaultGroup(std::string_view pgName)
{
    return pgName.empty() || pgName == "0";
}

std::optional<int64_t> groupId(std::string_view pgName)
{
    std::size_t pos = 0;
    bool negative = false;
    if (pos < pgName.size() && (pgName[pos] == '-' || pgName[pos] == '+')) {
        negative = pgName[pos] == '-';
        ++pos;
    }
    if (pos == pgName.size() || pgName.size() - pos > 10)
        return std::nullopt;
    int64_t value = 0;
    for (; pos < pgName.size(); ++pos) {
        char c = pgName[pos];
        if (c < '0' || c > '9')
            return std::nullopt;
        value = value * 10 + (c - '0');
    }
    if (negative)
        value = -value;
    if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max())
        return std::nullopt;
    return value;
}

namespace {

std::vector<int64_t> rankList(const nlohmann::json& ranks, const std::string& where)
{
    if (!ranks.is_array())
        throw Error(where + ": \"ranks\" must be an array of integers");
    std::vector<int64_t> out;
    for (const nlohmann::json& rank : ranks) {
        if (!rank.is_number_integer() || rank.get<int64_t>() < 0)
            throw Error(where + ": rank " + rank.dump() + " is not a non-negative integer");
        out.push_back(rank.get<int64_t>());
    }
    return out;
}

} // namespace

std::vector<ProcessGroup> parsePytorchProcessGroups(std::string_view inputsValues)
{
    // Python renders ["<json>"] as ['<json>'] unless the JSON holds a ', then as ["<json>"].
    if (inputsValues.size() < 4 || inputsValues[0] != '[' ||
        (inputsValues[1] != '\'' && inputsValues[1] != '"') ||
        inputsValues[inputsValues.size() - 1] != ']' ||
        inputsValues[inputsValues.size() - 2] != inputsValues[1])
        throw Error("process-group list: inputs.values must look like ['[{...}]'] (a Python list "
                    "holding one JSON string), got \"" +
                    std::string(inputsValues.substr(0, 40)) +
                    (inputsValues.size() > 40 ? "..." : "") + "\"");
    char quote = inputsValues[1];
    std::string_view body = inputsValues.substr(2, inputsValues.size() - 4);
    // Undo Python's escaping of backslashes and of the quote character.
    std::string text;
    text.reserve(body.size());
    for (std::size_t i = 0; i < body.size(); ++i) {
        if (body[i] == '\\' && i + 1 < body.size() && (body[i + 1] == '\\' || body[i + 1] == quote))
            ++i;
        text += body[i];
    }
    if (jsonNestingOverflow(text) != std::string_view::npos)
        throw Error("process-group list: " + nestingProblem());
    nlohmann::json list = nlohmann::json::parse(text, nullptr, false);
    if (list.is_discarded() || !list.is_array())
        throw Error("process-group list: the text inside inputs.values is not a JSON array");
    std::vector<ProcessGroup> groups;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const nlohmann::json& item = list[i];
        std::string where = "process-group list entry " + std::to_string(i);
        if (!item.is_object() || !item.contains("pg_name") || !item["pg_name"].is_string())
            throw Error(where + ": needs a string \"pg_name\"");
        std::string name = item["pg_name"].get<std::string>();
        std::optional<int64_t> id = groupId(name);
        if (!id)
            throw Error(where + ": pg_name \"" + name + "\" is not a decimal group id");
        if (!item.contains("ranks"))
            throw Error(where + ": needs \"ranks\" (an empty array means all ranks)");
        groups.push_back({*id, rankList(item["ranks"], where)});
    }
    return groups;
}

std::vector<ProcessGroup> readCommGroupFile(const std::filesystem::path& file)
{
    const std::string text = readTextFile(file, "a communicator-group JSON file");
    checkJsonNesting(text, file.string());
    nlohmann::json root = nlohmann::json::parse(text, nullptr, false);
    if (root.is_discarded() || !root.is_object())
        throw Error(file.string() + ": not a JSON object; write {\"1\": [0, 1, 2, 3], ...} "
                                    "(group id -> global ranks)");
    std::vector<ProcessGroup> groups;
    for (auto it = root.begin(); it != root.end(); ++it) {
        std::optional<int64_t> id = groupId(it.key());
        if (!id || *id < 1)
            throw Error(file.string() + ": key \"" + it.key() +
                        "\" is not a group id >= 1 (0 is reserved for all ranks)");
        std::vector<int64_t> ranks = rankList(it.value(), file.string() + ": group " + it.key());
        if (ranks.empty())
            throw Error(file.string() + ": group " + it.key() + " has no ranks");
        groups.push_back({*id, std::move(ranks)});
    }
    return groups;
}

} // namespace etsim::et
