#include "kernel/InputFile.h"

#include "kernel/Error.h"
#include "kernel/InputLimits.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

namespace etsim {

namespace fs = std::filesystem;

std::string fileTypeText(fs::file_type type)
{
    switch (type) {
    case fs::file_type::not_found:
        return "missing (no such file or folder)";
    case fs::file_type::regular:
        return "a regular file";
    case fs::file_type::directory:
        return "a folder";
    case fs::file_type::symlink:
        return "a symbolic link";
    case fs::file_type::block:
        return "a block device";
    case fs::file_type::character:
        return "a character device";
    case fs::file_type::fifo:
        return "a FIFO (named pipe)";
    case fs::file_type::socket:
        return "a socket";
    case fs::file_type::none:
    case fs::file_type::unknown:
        break;
    }
    return "of an unknown file type";
}

void requireRegularFile(const fs::path& path, std::string_view expected)
{
    std::error_code error;
    const fs::file_status status = fs::status(path, error);
    if (fs::is_regular_file(status))
        return;
    if (status.type() == fs::file_type::not_found)
        throw FileAccessError(path.string(), "cannot open: " + std::string(std::strerror(ENOENT)));
    if (error && status.type() != fs::file_type::not_found)
        throw FileAccessError(path.string(), "cannot open: " + error.message());
    throw FileAccessError(path.string(),
                          "cannot read: is " + fileTypeText(status.type()) + ", expected " +
                              std::string(expected));
}

std::string readTextFile(const fs::path& path, std::string_view expected)
{
    requireRegularFile(path, expected);
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw FileAccessError(path.string(), "cannot open: " + std::string(std::strerror(errno)));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad())
        throw FileAccessError(path.string(), "cannot read: " + std::string(std::strerror(errno)));
    return text.str();
}

namespace {

// The 1-based line holding the 1-based `byte` of `text` (a '\n' there ends that line); 0 for
// byte 0, which means "no place".
std::uint64_t lineOfByte(std::string_view text, std::size_t byte)
{
    if (byte == 0)
        return 0;
    const auto upTo = static_cast<long>(std::min(byte - 1, text.size()));
    return 1 + static_cast<std::uint64_t>(std::count(text.begin(), text.begin() + upTo, '\n'));
}

} // namespace

JsonSyntaxError::JsonSyntaxError(std::string source,
                                 std::string_view text,
                                 std::size_t byte,
                                 std::string libraryMessage,
                                 bool syntax)
    : Error(source + ": not valid JSON: " + libraryMessage)
    , source_(std::move(source))
    , byte_(byte)
    , line_(lineOfByte(text, byte))
    , endsEarly_(byte > text.size())
    , libraryMessage_(std::move(libraryMessage))
    , syntax_(syntax)
{
}

std::string JsonSyntaxError::reason() const
{
    if (!syntax_)
        return libraryMessage_;
    const std::size_t at = libraryMessage_.find("syntax error");
    return at == std::string::npos ? libraryMessage_ : libraryMessage_.substr(at);
}

namespace {

template <typename Json>
Json parseWithLimits(std::string_view text, const std::string& source)
{
    checkJsonNesting(text, source);
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const typename Json::parse_error& error) {
        throw JsonSyntaxError(source, text, error.byte, error.what(), true);
    } catch (const typename Json::exception& error) {
        // out_of_range (406) for a number beyond double's range ("1e999"): no position.
        throw JsonSyntaxError(source, text, 0, error.what(), false);
    }
}

} // namespace

nlohmann::json parseJson(std::string_view text, const std::string& source)
{
    return parseWithLimits<nlohmann::json>(text, source);
}

nlohmann::ordered_json parseOrderedJson(std::string_view text, const std::string& source)
{
    return parseWithLimits<nlohmann::ordered_json>(text, source);
}

nlohmann::json readJsonFile(const fs::path& path, std::string_view expected)
{
    return parseJson(readTextFile(path, expected), path.string());
}

} // namespace etsim
