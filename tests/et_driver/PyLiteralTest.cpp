// The Python list renderings of IOInfo (spec 2.3) as PyLiteral parses them: the value tree,
// the scalars kept as text, and the syntax it refuses.
#include "et_driver/PyLiteral.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim::et {
namespace {

// The tree as text: lists in [], integers as #n, other scalars in <>.
std::string shape(const PyValue& value)
{
    switch (value.kind) {
    case PyValue::Kind::Int:
        return "#" + std::to_string(value.number);
    case PyValue::Kind::Text:
        return "<" + value.text + ">";
    case PyValue::Kind::List:
        break;
    }
    std::string out = "[";
    for (std::size_t i = 0; i < value.items.size(); ++i)
        out += (i == 0 ? "" : ",") + shape(value.items[i]);
    return out + "]";
}

std::string parsed(const std::string& text)
{
    const std::optional<PyValue> value = parsePyLiteral(text);
    return value ? shape(*value) : "refused";
}

TEST(PyLiteral, ListsTuplesIntegersAndTextScalars)
{
    EXPECT_EQ(parsed("[[1, 1, 0, 4, 2, 'cuda:0'], []]"), "[[#1,#1,#0,#4,#2,<cuda:0>],[]]");
    EXPECT_EQ(parsed("(1,)"), "[#1]") << "a one-tuple's trailing comma";
    EXPECT_EQ(parsed("[1, 2,]"), "[#1,#2]");
    EXPECT_EQ(parsed("  [ -7 ,  None , 1.5 , True ]  "), "[#-7,<None>,<1.5>,<True>]");
    EXPECT_EQ(parsed("['Tensor(c10::BFloat16)', \"GenericList[Tensor]\"]"),
              "[<Tensor(c10::BFloat16)>,<GenericList[Tensor]>]");
    EXPECT_EQ(parsed("['it\\'s', 'a\\\\b']"), "[<it's>,<a\\b>]") << "a backslash keeps the next";
    EXPECT_EQ(parsed("[9223372036854775807, -9223372036854775808]"),
              "[#9223372036854775807,#-9223372036854775808]");
    EXPECT_EQ(parsed("[9223372036854775808]"), "[<9223372036854775808>]")
        << "an integer beyond int64 is kept as text";
    EXPECT_EQ(parsed("[-, 1-2, 007]"), "[<->,<1-2>,#7]");
    EXPECT_EQ(parsed("[[[]]]"), "[[[]]]");
    EXPECT_EQ(parsed("42"), "#42");
    EXPECT_EQ(parsed("'x'"), "<x>");
    EXPECT_EQ(parsed("[1 2]"), "[<1 2>]") << "a scalar runs to the next comma or closer";
}

TEST(PyLiteral, RefusesWhatItDoesNotKnow)
{
    for (const char* bad :
         {"", "   ", "[1, 2", "[1, 2)", "['open]", "[1,,2]", "[,]", "[1] x", "[(1, 2]", "]"})
        EXPECT_EQ(parsed(bad), "refused") << bad;
    // Nesting is bounded (33 levels pass, 34 do not), so a corrupt text cannot recurse deeply.
    EXPECT_NE(parsed(std::string(33, '[') + std::string(33, ']')), "refused");
    EXPECT_EQ(parsed(std::string(34, '[') + std::string(34, ']')), "refused");
}

TEST(PyLiteral, ParseListGivesTheItemsOfAListOnly)
{
    EXPECT_EQ(parseList("[1, 'a']").size(), 2U);
    EXPECT_TRUE(parseList("7").empty());
    EXPECT_TRUE(parseList("[1, 2").empty());
    EXPECT_TRUE(parseList("[]").empty());
}

} // namespace
} // namespace etsim::et
