#include "kernel/InputLimits.h"

#include "kernel/Config.h"
#include "kernel/Error.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace etsim {

std::string nestingProblem()
{
    return "nested deeper than " + std::to_string(maxNestingDepth) +
           " levels of lists and maps, etsim's limit for YAML and JSON input; flatten the "
           "structure (real files nest fewer than 10 levels)";
}

std::size_t jsonNestingOverflow(std::string_view text)
{
    std::size_t depth = 0;
    bool inString = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
            continue;
        }
        if (c == '"') {
            inString = true;
        } else if (c == '[' || c == '{') {
            if (++depth > maxNestingDepth)
                return i;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return std::string_view::npos;
}

void checkJsonNesting(std::string_view text, const std::string& source)
{
    const std::size_t at = jsonNestingOverflow(text);
    if (at == std::string_view::npos)
        return;
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
    throw Error(source + ": line " + std::to_string(line) + ": " + nestingProblem());
}

void checkYamlShape(const YAML::Node& root, const std::string& fileName)
{
    auto failAt = [&](const YAML::Node& node, const std::string& problem) {
        configLocation(fileName, node.Mark(), "").fail(problem);
    };
    // Depth-first with an explicit stack: the walk itself must not recurse per level.
    std::vector<std::pair<YAML::Node, std::size_t>> stack;
    stack.emplace_back(root, 0);
    std::size_t values = 0;
    while (!stack.empty()) {
        auto [node, depth] = std::move(stack.back());
        stack.pop_back();
        if (++values > maxYamlValues)
            failAt(node,
                   "the document expands to more than " + std::to_string(maxYamlValues) +
                       " values (aliases count at every use), etsim's limit for one YAML file; "
                       "write the values out or use fewer aliases of aliases");
        if (!node.IsMap() && !node.IsSequence())
            continue;
        if (depth + 1 > maxNestingDepth)
            failAt(node, nestingProblem());
        if (node.IsSequence()) {
            for (const YAML::Node& element : node)
                stack.emplace_back(element, depth + 1);
        } else {
            for (const auto& entry : node) {
                stack.emplace_back(entry.first, depth + 1);
                stack.emplace_back(entry.second, depth + 1);
            }
        }
    }
}

} // namespace etsim
