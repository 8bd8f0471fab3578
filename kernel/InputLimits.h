#pragma once
// Bounds that every etsim reader puts on the shape of its input, so that a broken or hostile
// file ends with an error that states the limit, never with a stack overflow (parsers and
// error printers recurse per nesting level) or unbounded memory. docs/config.md lists them.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace etsim {

/// Deepest nesting of lists and maps accepted in any YAML or JSON input: configuration files,
/// `--set` values, trace JSON, group files, models and reports. Real inputs nest fewer than 10
/// levels; yaml-cpp itself gives up at 2,000.
inline constexpr std::size_t maxNestingDepth = 100;

/// Most values one YAML document may expand to, an alias counted at every use: a few aliases
/// of aliases (the "billion laughs" file) otherwise expand to more values than memory holds.
inline constexpr std::size_t maxYamlValues = 1'000'000;

/// Most ranks one run or generated workload may have (`etsim run --replicate`, `--partitions`,
/// `etsim gen`): 16 times the largest cluster simulated so far, and few enough that one file
/// per rank stays within what a folder holds.
inline constexpr std::uint32_t maxRanks = std::uint32_t{1} << 20;

/// "nested deeper than 100 levels of lists and maps, etsim's limit for YAML and JSON input".
std::string nestingProblem();

/// The 0-based offset of the first `[` or `{` of a JSON text that opens level
/// maxNestingDepth + 1 (outside strings), or npos when the text stays within the limit.
std::size_t jsonNestingOverflow(std::string_view text);

/// Throws etsim::Error "<source>: line N: nested deeper than ..." when the JSON text nests
/// deeper than maxNestingDepth. Call it before handing the text to a JSON parser.
void checkJsonNesting(std::string_view text, const std::string& source);

/// Throws ConfigError at the first node that is nested deeper than maxNestingDepth, or when
/// the document expands (aliases counted at each use) to more than maxYamlValues values.
/// Walks without recursion.
void checkYamlShape(const YAML::Node& root, const std::string& fileName);

} // namespace etsim
