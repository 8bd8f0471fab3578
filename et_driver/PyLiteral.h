#pragma once
// The Python list renderings of Chakra's IOInfo strings (spec 2.3: values, shapes and types are
// Python `str()` of lists, not JSON), parsed into a small value tree. Shared by the readers of
// operator shapes (OperatorInfo.h) and of tensor identities (NodeTensors.h).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etsim::et {

// A value of the Python list renderings in IOInfo (spec 2.3): lists, integers, other
// scalars kept as text.
struct PyValue {
    enum class Kind { List, Int, Text } kind = Kind::Text;
    int64_t number = 0;
    std::string text;
    std::vector<PyValue> items;

    bool isIntList() const
    {
        if (kind != Kind::List)
            return false;
        for (const PyValue& item : items) {
            if (item.kind != Kind::Int)
                return false;
        }
        return true;
    }
    std::vector<int64_t> ints() const
    {
        std::vector<int64_t> out;
        for (const PyValue& item : items)
            out.push_back(item.number);
        return out;
    }
};

// What the parser meets in a rendering, in text order: one grammar for the value tree
// (parsePyLiteral) and for readers that want no tree (NodeTensors.cpp's tensor scan).
class PyLiteralEvents {
public:
    virtual ~PyLiteralEvents() = default;
    /// A list or tuple opens; `depth` counts the lists around it (0 at the top).
    virtual void beginList(int depth) = 0;
    virtual void endList(int depth) = 0;
    /// A quoted string at `depth`, between its quotes as written: `escaped` says whether it
    /// holds a backslash (a backslash keeps the character after it; unescapePyQuoted).
    virtual void quoted(std::string_view raw, bool escaped, int depth) = 0;
    /// A bare token at `depth` without trailing blanks, and its value when it is an integer
    /// (digits after an optional '-', within int64; others, "1.5" or "None", are text).
    virtual void bare(std::string_view token, std::optional<std::int64_t> integer, int depth) = 0;
};

// Reports the value `text` renders to `events`; false on any syntax the parser does not know
// (the events reported before the fault are then to be discarded).
bool scanPyLiteral(std::string_view text, PyLiteralEvents& events);

// The text of a quoted string as scanPyLiteral reports it, with its escapes removed.
std::string unescapePyQuoted(std::string_view raw);

// The value `text` renders; nullopt on any syntax the parser does not know.
std::optional<PyValue> parsePyLiteral(std::string_view text);

// The items of the list `text` renders; empty when it is no list or does not parse.
std::vector<PyValue> parseList(std::string_view text);

} // namespace etsim::et
