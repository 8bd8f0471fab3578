#include "et_driver/PyLiteral.h"

#include <cctype>
#include <charconv>
#include <system_error>

namespace etsim::et {

namespace {

class PyParser {
public:
    PyParser(std::string_view input, PyLiteralEvents& events) : text(input), events(events) {}

    // False on any syntax this parser does not know.
    bool parse()
    {
        if (!parseValue(0))
            return false;
        skipSpace();
        return pos == text.size();
    }

private:
    void skipSpace()
    {
        while (pos < text.size() && text[pos] == ' ')
            ++pos;
    }

    bool parseValue(int depth)
    {
        skipSpace();
        if (pos >= text.size() || depth > maxDepth)
            return false;
        char c = text[pos];
        if (c == '[' || c == '(') {
            char close = c == '[' ? ']' : ')';
            ++pos;
            events.beginList(depth);
            skipSpace();
            if (pos < text.size() && text[pos] == close) {
                ++pos;
                events.endList(depth);
                return true;
            }
            while (true) {
                if (!parseValue(depth + 1))
                    return false;
                skipSpace();
                if (pos >= text.size())
                    return false;
                if (text[pos] == ',') {
                    ++pos;
                    skipSpace();
                    if (pos < text.size() && text[pos] == close) { // trailing comma: (1,)
                        ++pos;
                        events.endList(depth);
                        return true;
                    }
                    continue;
                }
                if (text[pos] != close)
                    return false;
                ++pos;
                events.endList(depth);
                return true;
            }
        }
        if (c == '\'' || c == '"') {
            const std::size_t start = ++pos;
            bool escaped = false;
            while (pos < text.size() && text[pos] != c) {
                if (text[pos] == '\\' && pos + 1 < text.size()) {
                    escaped = true;
                    ++pos;
                }
                ++pos;
            }
            if (pos >= text.size())
                return false;
            events.quoted(text.substr(start, pos - start), escaped, depth);
            ++pos;
            return true;
        }
        std::size_t start = pos;
        while (pos < text.size() && text[pos] != ',' && text[pos] != ']' && text[pos] != ')')
            ++pos;
        std::string_view token = text.substr(start, pos - start);
        while (!token.empty() && token.back() == ' ')
            token.remove_suffix(1);
        if (token.empty())
            return false;
        events.bare(token, integerOf(token), depth);
        return true;
    }

    // Digits after an optional '-': from_chars reads them as stoll would, and one beyond
    // int64 stays text.
    static std::optional<std::int64_t> integerOf(std::string_view token)
    {
        for (std::size_t i = 0; i < token.size(); ++i) {
            if (!(std::isdigit(static_cast<unsigned char>(token[i])) ||
                  (i == 0 && token[i] == '-')))
                return std::nullopt;
        }
        if (token == "-")
            return std::nullopt;
        std::int64_t number = 0;
        const auto [end, error] =
            std::from_chars(token.data(), token.data() + token.size(), number);
        if (error != std::errc() || end != token.data() + token.size())
            return std::nullopt;
        return number;
    }

    static constexpr int maxDepth = 32;

    std::string_view text;
    PyLiteralEvents& events;
    std::size_t pos = 0;
};

// Builds the value tree from the events.
class TreeBuilder final : public PyLiteralEvents {
public:
    void beginList(int /*depth*/) override
    {
        PyValue list;
        list.kind = PyValue::Kind::List;
        open.push_back(std::move(list));
    }
    void endList(int /*depth*/) override
    {
        PyValue list = std::move(open.back());
        open.pop_back();
        add(std::move(list));
    }
    void quoted(std::string_view raw, bool escaped, int /*depth*/) override
    {
        PyValue value;
        value.text = escaped ? unescapePyQuoted(raw) : std::string(raw);
        add(std::move(value));
    }
    void bare(std::string_view token, std::optional<std::int64_t> integer, int /*depth*/) override
    {
        PyValue value;
        value.text = std::string(token);
        if (integer) {
            value.kind = PyValue::Kind::Int;
            value.number = *integer;
        }
        add(std::move(value));
    }

    std::optional<PyValue> result;

private:
    void add(PyValue value)
    {
        if (open.empty())
            result = std::move(value);
        else
            open.back().items.push_back(std::move(value));
    }

    std::vector<PyValue> open;
};

} // namespace

bool scanPyLiteral(std::string_view text, PyLiteralEvents& events)
{
    return PyParser(text, events).parse();
}

std::string unescapePyQuoted(std::string_view raw)
{
    std::string text;
    text.reserve(raw.size());
    for (std::size_t at = 0; at < raw.size(); ++at) {
        if (raw[at] == '\\' && at + 1 < raw.size())
            ++at;
        text += raw[at];
    }
    return text;
}

std::optional<PyValue> parsePyLiteral(std::string_view text)
{
    TreeBuilder tree;
    if (!scanPyLiteral(text, tree))
        return std::nullopt;
    return std::move(tree.result);
}

std::vector<PyValue> parseList(std::string_view text)
{
    std::optional<PyValue> value = parsePyLiteral(text);
    if (!value || value->kind != PyValue::Kind::List)
        return {};
    return std::move(value->items);
}

} // namespace etsim::et
