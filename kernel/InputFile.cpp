#include "kernel/InputFile.h"

#include "kernel/Error.h"
#include "kernel/InputLimits.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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

nlohmann::json readJsonFile(const fs::path& path, std::string_view expected)
{
    const std::string text = readTextFile(path, expected);
    checkJsonNesting(text, path.string());
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& error) {
        // parse_error, and out_of_range for a number beyond double's range ("1e999").
        throw Error(path.string() + ": not valid JSON: " + error.what());
    }
}

} // namespace etsim
