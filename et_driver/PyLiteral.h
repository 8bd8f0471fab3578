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

// The value `text` renders; nullopt on any syntax the parser does not know.
std::optional<PyValue> parsePyLiteral(std::string_view text);

// The items of the list `text` renders; empty when it is no list or does not parse.
std::vector<PyValue> parseList(const std::string& text);

} // namespace etsim::et
