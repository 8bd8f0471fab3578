#include "et_driver/CanonicalTuples.h"

#include <array>
#include <cstdint>

namespace etsim::et {

namespace {

// A cursor over canonical text; every read is all or nothing on the shape it expects.
class Cursor {
public:
    explicit Cursor(std::string_view text) : p(text.data()), end(text.data() + text.size()) {}

    bool done() const { return p == end; }
    bool take(char c)
    {
        if (p == end || *p != c)
            return false;
        ++p;
        return true;
    }
    bool separator()
    {
        if (end - p < 2 || p[0] != ',' || p[1] != ' ')
            return false;
        p += 2;
        return true;
    }
    // At most 18 digits after an optional '-', so the value fits int64 without a check.
    bool integer(std::int64_t& value)
    {
        const bool negative = take('-');
        const char* first = p;
        std::int64_t magnitude = 0;
        while (p != end && *p >= '0' && *p <= '9' && p - first < 18)
            magnitude = magnitude * 10 + (*p++ - '0');
        if (p == first || (p != end && *p >= '0' && *p <= '9'))
            return false;
        value = negative ? -magnitude : magnitude;
        return true;
    }
    // Single-quoted text without a backslash.
    bool quoted(std::string_view& text)
    {
        if (!take('\''))
            return false;
        const char* first = p;
        while (p != end && *p != '\'') {
            if (*p == '\\')
                return false;
            ++p;
        }
        if (p == end)
            return false;
        text = std::string_view(first, static_cast<std::size_t>(p - first));
        ++p;
        return true;
    }

private:
    const char* p;
    const char* end;
};

// The general scan keeps the types of at most this many arguments (NodeTensors.cpp).
constexpr std::size_t keptTypes = 64;

// Which arguments' types name a Tensor; false for text that is not a canonical list of them.
bool readTypes(std::string_view text, std::array<bool, keptTypes>& tensor, std::size_t& count)
{
    Cursor in(text);
    count = 0;
    if (!in.take('['))
        return false;
    if (in.take(']'))
        return in.done();
    do {
        std::string_view type;
        if (count == keptTypes || !in.quoted(type))
            return false;
        tensor[count++] = type.find("Tensor") != std::string_view::npos;
    } while (in.separator());
    return in.take(']') && in.done();
}

} // namespace

bool readCanonicalTuples(std::string_view values,
                         std::string_view types,
                         std::vector<TensorUse>& out)
{
    std::array<bool, keptTypes> tensor{};
    std::size_t typed = 0;
    // Without types every argument is read, as by the general scan.
    if (!types.empty() && !readTypes(types, tensor, typed))
        return false;
    Cursor in(values);
    if (!in.take('['))
        return false;
    if (in.take(']'))
        return in.done();
    std::size_t argument = 0;
    do {
        std::array<std::int64_t, 5> entries{};
        std::string_view device;
        if (!in.take('['))
            return false;
        for (std::size_t i = 0; i < entries.size(); ++i)
            if (!in.integer(entries[i]) || !in.separator())
                return false;
        if (!in.quoted(device) || !in.take(']'))
            return false;
        const std::int64_t elements = entries[3];
        const std::int64_t elementBytes = entries[4];
        // Refusals are the general scan's to report.
        if (entries[0] < 0 || elements < 0 || elementBytes < 0)
            return false;
        const auto count = static_cast<std::uint64_t>(elements);
        const auto size = static_cast<std::uint64_t>(elementBytes);
        if (size != 0 && count > ~std::uint64_t{0} / size)
            return false;
        const bool skipped = argument < typed && !tensor[argument];
        if (!skipped && count * size != 0)
            out.push_back(TensorUse{static_cast<std::uint64_t>(entries[0]), count * size});
        ++argument;
    } while (in.separator());
    return in.take(']') && in.done();
}

} // namespace etsim::et
