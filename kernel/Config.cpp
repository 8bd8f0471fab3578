#include "kernel/Config.h"

#include "kernel/InputFile.h"
#include "kernel/InputLimits.h"
#include "kernel/Utf8.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>

namespace etsim {

namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// neighbouring characters each cost 1, so "bandwith" and "bandwdith" are both 1 from
// "bandwidth".
std::size_t editDistance(std::string_view a, std::string_view b)
{
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i)
        d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j)
        d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    }
    return d[a.size()][b.size()];
}

// The candidate closest to `text`, if it is close enough to be a plausible misspelling: about
// one edit per three characters, at least one.
std::optional<std::string_view> nearest(std::string_view text,
                                        const std::vector<std::string_view>& candidates)
{
    std::optional<std::string_view> best;
    std::size_t bestDistance = 0;
    for (std::string_view candidate : candidates) {
        std::size_t distance = editDistance(text, candidate);
        std::size_t allowed = std::max<std::size_t>(1, std::max(text.size(), candidate.size()) / 3);
        if (distance == 0 || distance > allowed)
            continue;
        if (!best || distance < bestDistance) {
            best = candidate;
            bestDistance = distance;
        }
    }
    return best;
}

std::string join(const std::vector<std::string_view>& names)
{
    std::string out;
    for (std::string_view name : names) {
        if (!out.empty())
            out += ", ";
        out += name;
    }
    return out;
}

std::string inQuotes(std::string_view text)
{
    return "\"" + std::string(text) + "\"";
}

std::string describe(const YAML::Node& node)
{
    switch (node.Type()) {
    case YAML::NodeType::Scalar:
        return inQuotes(node.Scalar());
    case YAML::NodeType::Sequence:
        return "a sequence";
    case YAML::NodeType::Map:
        return "a map";
    case YAML::NodeType::Null:
        return "an empty value";
    case YAML::NodeType::Undefined:
        break;
    }
    return "nothing";
}

std::string childPath(const std::string& parent, std::string_view key)
{
    return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string invalidInteger(const std::string& text, const std::string& min, const std::string& max)
{
    return "expected an integer from " + min + " to " + max + ", got " + inQuotes(text);
}

struct Magnitude {
    bool negative = false;
    std::uint64_t value = 0;
};

// Sign, then decimal or 0x hexadecimal digits and nothing else; nullopt when the text is not
// such an integer or does not fit in 64 bits.
std::optional<Magnitude> parseMagnitude(std::string_view text)
{
    Magnitude magnitude;
    if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
        magnitude.negative = text.front() == '-';
        text.remove_prefix(1);
    }
    int base = 10;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        base = 16;
        text.remove_prefix(2);
    }
    // from_chars would accept a second sign for signed types; the magnitude is unsigned, so a
    // leading '-' or '+' here is rejected as invalid.
    const char* end = text.data() + text.size();
    auto [ptr, error] = std::from_chars(text.data(), end, magnitude.value, base);
    if (text.empty() || error != std::errc() || ptr != end)
        return std::nullopt;
    return magnitude;
}

} // namespace

ConfigLocation configLocation(const std::string& file, const YAML::Mark& mark, std::string keyPath)
{
    // yaml-cpp marks are 0-based and -1 when unknown; ConfigError wants 1-based with 0 unknown.
    return {file,
            mark.line >= 0 ? mark.line + 1 : 0,
            mark.column >= 0 ? mark.column + 1 : 0,
            std::move(keyPath)};
}

void ConfigLocation::fail(const std::string& problem) const
{
    throw ConfigError(file, line, column, keyPath, problem);
}

// ---------------------------------------------------------------------------------------------

ConfigNode::ConfigNode(const YAML::Node& yaml, ConfigLocation where)
    : yaml(yaml), where(std::move(where))
{
}

ConfigNode::Kind ConfigNode::kind() const
{
    switch (yaml.Type()) {
    case YAML::NodeType::Scalar:
        return Kind::Scalar;
    case YAML::NodeType::Sequence:
        return Kind::Sequence;
    case YAML::NodeType::Map:
        return Kind::Map;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
        break;
    }
    return Kind::Null;
}

const std::string& ConfigNode::scalar(std::string_view expected) const
{
    if (!yaml.IsScalar())
        fail("expected " + std::string(expected) + ", got " + describe(yaml));
    return yaml.Scalar();
}

std::vector<ConfigNode> ConfigNode::elements() const
{
    if (!yaml.IsSequence())
        fail("expected a sequence, got " + describe(yaml));
    std::vector<ConfigNode> elements;
    elements.reserve(yaml.size());
    for (std::size_t i = 0; i < yaml.size(); ++i) {
        const YAML::Node element = yaml[i];
        ConfigLocation location = configLocation(
            where.file, element.Mark(), where.keyPath + "[" + std::to_string(i) + "]");
        // yaml-cpp marks an empty element ("-" alone) at the token after it, often on another
        // line; the sequence's own position is the better pointer.
        if (element.IsNull()) {
            location.line = where.line;
            location.column = where.column;
        }
        elements.push_back(ConfigNode(element, std::move(location)));
    }
    return elements;
}

// ---------------------------------------------------------------------------------------------

ConfigMap::ConfigMap(const ConfigNode& node) : where(node.location())
{
    // The file's own top level: say so, rather than "expected a map" at an empty key path.
    if (where.keyPath.empty() && !node.isMap())
        node.fail("the file is not a mapping of keys: its top level is " + describe(node.yaml) +
                  "; it must hold key: value lines");
    if (node.isNull())
        node.fail("expected a map, got an empty value (write {} for a map without keys)");
    if (!node.isMap())
        node.fail("expected a map, got " + describe(node.yaml));
    // The iterator's operator-> hands out a temporary pair, so the key and value nodes are
    // copied (cheap handles) rather than referenced.
    for (auto entry = node.yaml.begin(); entry != node.yaml.end(); ++entry) {
        const YAML::Node keyNode = entry->first;
        const YAML::Node valueNode = entry->second;
        if (!keyNode.IsScalar())
            configLocation(where.file, keyNode.Mark(), where.keyPath)
                .fail("expected a plain key, got " + describe(keyNode));
        const std::string& key = keyNode.Scalar();
        ConfigLocation keyLocation =
            configLocation(where.file, keyNode.Mark(), childPath(where.keyPath, key));
        // yaml-cpp 0.7 keeps both entries of a repeated key (node["k"] returns the first), so
        // repeats are found here rather than silently shadowed.
        if (const Field* first = find(key))
            keyLocation.fail("duplicate key (first defined at line " +
                             std::to_string(first->keyLocation.line) + ")");
        ConfigLocation valueLocation =
            configLocation(where.file, valueNode.Mark(), keyLocation.keyPath);
        // An empty value ("key:" alone) is marked at the next token, usually the next line.
        if (valueNode.IsNull()) {
            valueLocation.line = keyLocation.line;
            valueLocation.column = keyLocation.column;
        }
        fields.push_back({key, keyLocation, ConfigNode(valueNode, std::move(valueLocation))});
    }
}

void ConfigMap::declare(std::string_view key)
{
    if (std::find(declared.begin(), declared.end(), key) == declared.end())
        declared.emplace_back(key);
}

ConfigMap::Field* ConfigMap::find(std::string_view key)
{
    for (Field& field : fields)
        if (field.key == key)
            return &field;
    return nullptr;
}

const ConfigMap::Field* ConfigMap::find(std::string_view key) const
{
    for (const Field& field : fields)
        if (field.key == key)
            return &field;
    return nullptr;
}

bool ConfigMap::has(std::string_view key)
{
    return take(key) != nullptr;
}

const ConfigNode* ConfigMap::take(std::string_view key)
{
    declare(key);
    Field* field = find(key);
    if (!field)
        return nullptr;
    field->read = true;
    return &field->value;
}

const ConfigNode& ConfigMap::takeRequired(std::string_view key, std::string_view help)
{
    if (const ConfigNode* node = take(key))
        return *node;
    std::string problem = "missing required key";
    if (!help.empty())
        problem += " (" + std::string(help) + ")";
    // A misspelt key is the usual cause; point at it rather than leave the user to find it.
    std::vector<std::string_view> unread;
    for (const Field& field : fields)
        if (!field.read)
            unread.push_back(field.key);
    if (auto typo = nearest(key, unread))
        problem += "; is " + inQuotes(*typo) + " on line " +
                   std::to_string(find(*typo)->keyLocation.line) + " a misspelling?";
    ConfigLocation location = where;
    location.keyPath = childPath(where.keyPath, key);
    location.fail(problem);
}

std::optional<ConfigNode> ConfigMap::value(std::string_view key)
{
    const ConfigNode* node = take(key);
    if (!node)
        return std::nullopt;
    return *node;
}

void ConfigMap::ignore(std::string_view key)
{
    take(key);
}

std::vector<ConfigLocation> ConfigMap::acceptUnread()
{
    std::vector<ConfigLocation> unread;
    for (Field& field : fields) {
        if (field.read)
            continue;
        field.read = true;
        unread.push_back(field.keyLocation);
    }
    return unread;
}

void ConfigMap::fail(std::string_view key, const std::string& problem) const
{
    if (const Field* field = find(key))
        field->value.fail(problem);
    ConfigLocation location = where;
    location.keyPath = childPath(where.keyPath, key);
    location.fail(problem);
}

void ConfigMap::finish() const
{
    for (const Field& field : fields) {
        if (field.read)
            continue;
        if (field.key == "<<")
            field.keyLocation.fail("merge keys (<<) are not supported (yaml-cpp 0.7); repeat "
                                   "the keys or alias the whole map");
        std::vector<std::string_view> known(declared.begin(), declared.end());
        if (auto suggestion = nearest(field.key, known))
            field.keyLocation.fail("unknown key (did you mean " + inQuotes(*suggestion) + "?)");
        if (known.empty())
            field.keyLocation.fail("unknown key; this map takes no keys");
        field.keyLocation.fail("unknown key; known keys: " + join(known));
    }
}

// ---------------------------------------------------------------------------------------------

ConfigNode loadConfigFile(const std::filesystem::path& path)
{
    return loadConfigString(readTextFile(path, "a YAML file"), path.string());
}

namespace {

// Where the first documents of a YAML stream start, read with the event parser, which builds
// nothing. yaml-cpp 0.7's parser does not move past a ',' (or another flow indicator) at
// document level: it reports an empty document at the same place again and again, so
// YAML::LoadAll on such a file grows without bound. Two documents starting at one place are
// that case; more than two starts are never needed.
class DocumentStarts : public YAML::EventHandler {
public:
    struct Enough {};
    std::vector<YAML::Mark> marks;

    void OnDocumentStart(const YAML::Mark& mark) override
    {
        marks.push_back(mark);
        if (marks.size() == 3 || stuck())
            throw Enough{};
    }
    bool stuck() const
    {
        return marks.size() >= 2 && marks[marks.size() - 1].pos == marks[marks.size() - 2].pos;
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
    void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
    void
    OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override
    {
    }
    void OnSequenceStart(const YAML::Mark&,
                         const std::string&,
                         YAML::anchor_t,
                         YAML::EmitterStyle::value) override
    {
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark&,
                    const std::string&,
                    YAML::anchor_t,
                    YAML::EmitterStyle::value) override
    {
    }
    void OnMapEnd() override {}
};

} // namespace

namespace {

// YAML is text. A binary file (a trace, an executable) given as a config would otherwise fail
// deep in the parser with a message about escapes or indentation. Files that start with a
// UTF-16 or UTF-32 byte order mark are left to yaml-cpp, which reads them.
void requireText(const std::string& text, const std::string& fileName)
{
    std::string_view view(text);
    for (std::string_view mark : {std::string_view("\xFE\xFF"),
                                  std::string_view("\xFF\xFE"),
                                  std::string_view("\0\0\xFE\xFF", 4)})
        if (view.substr(0, mark.size()) == mark)
            return;
    std::optional<std::size_t> bad = firstNonTextByte(view);
    if (!bad)
        return;
    const std::size_t lineEnd = *bad == 0 ? std::string_view::npos : view.rfind('\n', *bad - 1);
    YAML::Mark mark;
    mark.pos = static_cast<int>(*bad);
    mark.line = static_cast<int>(std::count(view.begin(), view.begin() + *bad, '\n'));
    mark.column = static_cast<int>(lineEnd == std::string_view::npos ? *bad : *bad - lineEnd - 1);
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[*bad]));
    configLocation(fileName, mark, "")
        .fail(std::string("byte ") + byte +
              " is not UTF-8 text, and a config file is YAML "
              "text: is this a binary file, or one saved in "
              "another encoding? Give the YAML file, saved as "
              "UTF-8");
}

} // namespace

YAML::Node parseYamlDocument(const std::string& text, const std::string& fileName)
{
    requireText(text, fileName);
    YAML::Node document;
    DocumentStarts starts;
    try {
        std::istringstream events(text);
        YAML::Parser parser(events);
        try {
            while (parser.HandleNextDocument(starts)) {
            }
        } catch (const DocumentStarts::Enough&) {
        }
        if (starts.stuck())
            configLocation(fileName, starts.marks.back(), "")
                .fail("invalid YAML: the parser cannot read past this character (a ',', ']' "
                      "or '}' outside a [ ] or { } collection?)");
        if (starts.marks.size() > 1)
            configLocation(fileName, starts.marks[1], "")
                .fail("a second YAML document starts here; a config file holds exactly one");
        document = YAML::Load(text);
    } catch (const YAML::DeepRecursion& error) {
        configLocation(fileName, error.mark, "").fail(nestingProblem());
    } catch (const YAML::Exception& error) {
        configLocation(fileName, error.mark, "").fail("invalid YAML: " + error.msg);
    }
    if (starts.marks.empty())
        return YAML::Node(YAML::NodeType::Null);
    checkYamlShape(document, fileName);
    return document;
}

void requireMapping(const YAML::Node& root, const std::string& fileName, std::string_view example)
{
    if (root.IsMap())
        return;
    ConfigLocation location = configLocation(fileName, root.Mark(), "");
    if (location.line == 0) {
        location.line = 1;
        location.column = 1;
    }
    location.fail("the file is not a mapping of keys: its top level is " + describe(root) +
                  "; it must hold key: value lines such as " + std::string(example));
}

ConfigNode loadConfigString(const std::string& text, const std::string& fileName)
{
    return loadConfigYaml(parseYamlDocument(text, fileName), fileName);
}

ConfigNode loadConfigYaml(const YAML::Node& root, const std::string& fileName)
{
    ConfigLocation location = configLocation(fileName, root.Mark(), "");
    // An empty document has no mark; its problems are at the start of the file.
    if (location.line == 0) {
        location.line = 1;
        location.column = 1;
    }
    return {root, std::move(location)};
}

// ---------------------------------------------------------------------------------------------

bool ConfigTraits<bool>::fromScalar(const std::string& text)
{
    // The YAML 1.2 core schema spellings; yes/no/on/off (YAML 1.1) are refused on purpose.
    if (text == "true" || text == "True" || text == "TRUE")
        return true;
    if (text == "false" || text == "False" || text == "FALSE")
        return false;
    throw Error("expected true or false, got " + inQuotes(text));
}

double ConfigTraits<double>::fromScalar(const std::string& text)
{
    std::string_view digits = text;
    if (!digits.empty() && digits.front() == '+')
        digits.remove_prefix(1);
    double value = 0.0;
    const char* end = digits.data() + digits.size();
    auto [ptr, error] = std::from_chars(digits.data(), end, value);
    if (digits.empty() || ptr != end ||
        (error != std::errc() && error != std::errc::result_out_of_range))
        throw Error("expected a number, got " + inQuotes(text));
    if (error == std::errc::result_out_of_range || !std::isfinite(value))
        throw Error("expected a finite number, got " + inQuotes(text));
    return value;
}

std::string exactNumberText(double value)
{
    char text[40];
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, value);
        if (std::strtod(text, nullptr) == value)
            break;
    }
    return text;
}

namespace detail {

std::int64_t parseSigned(const std::string& text, std::int64_t min, std::int64_t max)
{
    auto magnitude = parseMagnitude(text);
    // -(min + 1) is representable for every signed min, unlike -min.
    std::uint64_t negativeLimit = static_cast<std::uint64_t>(-(min + 1)) + 1;
    if (magnitude) {
        if (!magnitude->negative && magnitude->value <= static_cast<std::uint64_t>(max))
            return static_cast<std::int64_t>(magnitude->value);
        if (magnitude->negative && magnitude->value <= negativeLimit)
            return magnitude->value == 0 ? 0 : -static_cast<std::int64_t>(magnitude->value - 1) - 1;
    }
    throw Error(invalidInteger(text, std::to_string(min), std::to_string(max)));
}

std::uint64_t parseUnsigned(const std::string& text, std::uint64_t max)
{
    auto magnitude = parseMagnitude(text);
    if (magnitude && (!magnitude->negative || magnitude->value == 0) && magnitude->value <= max)
        return magnitude->value;
    throw Error(invalidInteger(text, "0", std::to_string(max)));
}

std::string enumChoices(const std::vector<std::string_view>& names)
{
    return "one of " + join(names);
}

std::string unknownEnumProblem(const std::vector<std::string_view>& names, const std::string& text)
{
    std::string problem = "expected " + enumChoices(names) + ", got " + inQuotes(text);
    if (auto suggestion = nearest(text, names))
        problem += " (did you mean " + inQuotes(*suggestion) + "?)";
    return problem;
}

} // namespace detail

} // namespace etsim
