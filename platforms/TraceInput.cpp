// The trace files of a job: their hashes for the report, and the per-rank node sources.
#include "et_driver/TraceError.h"
#include "et_driver/TraceReadAhead.h"
#include "kernel/Error.h"
#include "platforms/Job.h"

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <openssl/evp.h>
#include <zlib.h>

namespace etsim::platform {

TraceFileInfo describeTraceFile(const std::filesystem::path& path, const std::atomic<bool>* stop)
{
    TraceFileInfo info;
    info.path = path.string();
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw Error(info.path + ": cannot open to hash it (check that the file is readable)");
    // OpenSSL's EVP interface: one context per file, freed on every path out.
    std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> sha(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    if (!sha || EVP_DigestInit_ex(sha.get(), EVP_sha256(), nullptr) != 1)
        throw Error(info.path + ": cannot start a SHA-256 digest (OpenSSL libcrypto failed)");
    std::array<char, 1 << 16> buffer{};
    uLong crc = crc32(0L, Z_NULL, 0);
    while (in && (stop == nullptr || !stop->load(std::memory_order_relaxed))) {
        in.read(buffer.data(), buffer.size());
        const std::streamsize got = in.gcount();
        if (got <= 0)
            break;
        crc = crc32(crc, reinterpret_cast<const Bytef*>(buffer.data()), static_cast<uInt>(got));
        if (EVP_DigestUpdate(sha.get(), buffer.data(), static_cast<std::size_t>(got)) != 1)
            throw Error(info.path + ": SHA-256 digest failed (OpenSSL libcrypto)");
        info.bytes += static_cast<std::uint64_t>(got);
    }
    if (in.bad())
        throw Error(info.path + ": read error after " + std::to_string(info.bytes) +
                    " bytes while hashing it");
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int digestLength = 0;
    if (EVP_DigestFinal_ex(sha.get(), digest.data(), &digestLength) != 1 || digestLength != 32)
        throw Error(info.path + ": SHA-256 digest failed (OpenSSL libcrypto)");
    constexpr char hexDigits[] = "0123456789abcdef";
    info.sha256.reserve(2 * std::size_t{digestLength});
    for (unsigned int i = 0; i < digestLength; ++i) {
        info.sha256 += hexDigits[digest[i] >> 4];
        info.sha256 += hexDigits[digest[i] & 0xf];
    }
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08lx", static_cast<unsigned long>(crc));
    info.crc32 = hex;
    return info;
}

// ---------------------------------------------------------------------------------------------

TraceInput::TraceInput(const std::filesystem::path& prefixOrFolder,
                       std::uint32_t replicate,
                       std::vector<bool> localRanks)
    : local(std::move(localRanks))
{
    rankFiles = et::findRankFiles(prefixOrFolder);
    if (replicate == 0) {
        set = std::make_unique<et::TraceSet>(std::vector<et::RankFile>(rankFiles));
        return;
    }
    if (rankFiles.size() != 1)
        throw Error("--replicate " + std::to_string(replicate) + " runs a one-rank trace, but " +
                    prefixOrFolder.string() + " has " + std::to_string(rankFiles.size()) +
                    " ranks; drop --replicate");
    // Readers open on a rank's first read, so a partitioned run's other ranks open nothing.
    std::vector<et::RankFile> copies(replicate);
    for (std::uint32_t rank = 0; rank < replicate; ++rank)
        copies[rank] = {rank, rankFiles.front().path};
    set = std::make_unique<et::TraceSet>(std::move(copies));
    replicated = true;
}

TraceInput::~TraceInput() = default;

std::size_t TraceInput::rankCount() const
{
    return set->rankCount();
}

std::vector<et::NodeSource> TraceInput::sources()
{
    if (!readAhead)
        readAhead = std::make_unique<et::TraceReadAhead>(*set, 0, local);
    std::vector<et::NodeSource> list;
    for (std::uint32_t rank = 0; rank < set->rankCount(); ++rank)
        list.emplace_back(
            [this, rank](et::TraceNode& node) { return readAhead->next(rank, node); });
    return list;
}

std::vector<std::pair<std::uint32_t, std::filesystem::path>> TraceInput::filesToHash() const
{
    std::vector<std::pair<std::uint32_t, std::filesystem::path>> list;
    for (const et::RankFile& file : rankFiles)
        if (replicated || file.rank >= local.size() || local[file.rank])
            list.emplace_back(file.rank, file.path);
    return list;
}

} // namespace etsim::platform
