#include "et_driver/PyLiteral.h"

#include <cctype>
#include <charconv>
#include <system_error>

namespace etsim::et {

namespace {

class PyParser {
public:
    explicit PyParser(std::string_view input) : text(input) {}

    // nullopt on any syntax this parser does not know.
    std::optional<PyValue> parse()
    {
        std::optional<PyValue> value = parseValue(0);
        skipSpace();
        if (!value || pos != text.size())
            return std::nullopt;
        return value;
    }

private:
    void skipSpace()
    {
        while (pos < text.size() && text[pos] == ' ')
            ++pos;
    }

    std::optional<PyValue> parseValue(int depth)
    {
        skipSpace();
        if (pos >= text.size() || depth > maxDepth)
            return std::nullopt;
        PyValue value;
        char c = text[pos];
        if (c == '[' || c == '(') {
            char close = c == '[' ? ']' : ')';
            ++pos;
            value.kind = PyValue::Kind::List;
            skipSpace();
            if (pos < text.size() && text[pos] == close) {
                ++pos;
                return value;
            }
            while (true) {
                std::optional<PyValue> item = parseValue(depth + 1);
                if (!item)
                    return std::nullopt;
                value.items.push_back(std::move(*item));
                skipSpace();
                if (pos >= text.size())
                    return std::nullopt;
                if (text[pos] == ',') {
                    ++pos;
                    skipSpace();
                    if (pos < text.size() && text[pos] == close) { // trailing comma: (1,)
                        ++pos;
                        return value;
                    }
                    continue;
                }
                if (text[pos] != close)
                    return std::nullopt;
                ++pos;
                return value;
            }
        }
        if (c == '\'' || c == '"') {
            ++pos;
            while (pos < text.size() && text[pos] != c) {
                if (text[pos] == '\\' && pos + 1 < text.size())
                    ++pos;
                value.text += text[pos++];
            }
            if (pos >= text.size())
                return std::nullopt;
            ++pos;
            return value;
        }
        std::size_t start = pos;
        while (pos < text.size() && text[pos] != ',' && text[pos] != ']' && text[pos] != ')')
            ++pos;
        std::string_view token = text.substr(start, pos - start);
        while (!token.empty() && token.back() == ' ')
            token.remove_suffix(1);
        if (token.empty())
            return std::nullopt;
        value.text = std::string(token);
        bool integer = true;
        for (std::size_t i = 0; i < token.size(); ++i) {
            if (!(std::isdigit(static_cast<unsigned char>(token[i])) ||
                  (i == 0 && token[i] == '-')))
                integer = false;
        }
        if (integer && token != "-") {
            // Digits after an optional '-': from_chars reads them as stoll would, and one
            // beyond int64 stays text.
            std::int64_t number = 0;
            const auto [end, error] =
                std::from_chars(token.data(), token.data() + token.size(), number);
            if (error == std::errc() && end == token.data() + token.size()) {
                value.number = number;
                value.kind = PyValue::Kind::Int;
            }
        }
        return value;
    }

    static constexpr int maxDepth = 32;

    std::string_view text;
    std::size_t pos = 0;
};

} // namespace

std::optional<PyValue> parsePyLiteral(std::string_view text)
{
    return PyParser(text).parse();
}

std::vector<PyValue> parseList(const std::string& text)
{
    std::optional<PyValue> value = parsePyLiteral(text);
    if (!value || value->kind != PyValue::Kind::List)
        return {};
    return std::move(value->items);
}

} // namespace etsim::et
