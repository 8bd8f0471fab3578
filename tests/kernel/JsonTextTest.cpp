// parseJson / parseOrderedJson (kernel/InputFile.h), the one place where JSON text is parsed:
// every error of the JSON library becomes JsonSyntaxError with the source and the place.

#include "kernel/InputFile.h"
#include "kernel/InputLimits.h"

#include <gtest/gtest.h>

#include <string>

namespace etsim {
namespace {

JsonSyntaxError syntaxErrorOf(const std::string& text)
{
    try {
        (void)parseJson(text, "m.json");
    } catch (const JsonSyntaxError& error) {
        return error;
    }
    ADD_FAILURE() << "no JsonSyntaxError for " << text;
    return JsonSyntaxError("m.json", "", 0, "", false);
}

TEST(JsonText, ParsesAndKeepsKeyOrderWhenAsked)
{
    EXPECT_EQ(parseJson(R"({"b": 1, "a": [2, 3.5]})", "m.json")["a"][1].get<double>(), 3.5);
    EXPECT_EQ(parseOrderedJson(R"({"b": 1, "a": 2})", "m.json").begin().key(), "b");
}

TEST(JsonText, SyntaxErrorNamesSourceLineAndByte)
{
    const JsonSyntaxError error = syntaxErrorOf("{\"a\": 1,\n \"b\": x}");
    EXPECT_EQ(error.source(), "m.json");
    EXPECT_EQ(error.byte(), 16U); // the 'x'
    EXPECT_EQ(error.line(), 2U);
    EXPECT_FALSE(error.endsEarly());
    EXPECT_EQ(std::string(error.what())
                  .rfind("m.json: not valid JSON: [json.exception.parse_error.101] "
                         "parse error at line 2, column 7: syntax error",
                         0),
              0U)
        << error.what();
    EXPECT_EQ(error.reason().rfind("syntax error while parsing value - invalid literal", 0), 0U)
        << error.reason();
}

TEST(JsonText, TruncatedTextEndsEarly)
{
    const JsonSyntaxError error = syntaxErrorOf("{\"a\": [1, 2,\n");
    EXPECT_TRUE(error.endsEarly());
    EXPECT_EQ(error.line(), 2U);
    EXPECT_NE(error.reason().find("unexpected end of input"), std::string::npos) << error.reason();
}

// nlohmann throws out_of_range, not parse_error, for a number beyond double's range; it was
// once an uncaught exception in six readers.
TEST(JsonText, NumberBeyondDoubleRangeIsASyntaxErrorWithoutPlace)
{
    const JsonSyntaxError error = syntaxErrorOf("{\"a\": 1e999}");
    EXPECT_EQ(error.byte(), 0U);
    EXPECT_EQ(error.line(), 0U);
    EXPECT_EQ(error.reason(), error.libraryMessage());
    EXPECT_NE(error.reason().find("[json.exception.out_of_range.406] number overflow"),
              std::string::npos)
        << error.reason();
}

TEST(JsonText, NestingBeyondTheLimitIsRefusedBeforeParsing)
{
    const std::string deep =
        "\n" + std::string(maxNestingDepth + 1, '[') + std::string(maxNestingDepth + 1, ']');
    try {
        (void)parseOrderedJson(deep, "m.json");
        FAIL() << "no error";
    } catch (const Error& error) {
        EXPECT_EQ(std::string(error.what()), "m.json: line 2: " + nestingProblem());
    }
    EXPECT_NO_THROW((void)parseJson(deep.substr(2, deep.size() - 3), "m.json"));
}

} // namespace
} // namespace etsim
