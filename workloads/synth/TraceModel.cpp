#include "workloads/synth/TraceModel.h"

#include "et_driver/OperatorInfo.h"
#include "et_driver/TraceNode.h"
#include "kernel/Error.h"
#include "workloads/synth/TraceModelDetail.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace etsim::workloads::synth {

namespace detail {

namespace {

std::string lower(std::string text)
{
    for (char& c : text)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

} // namespace

std::string collectiveKind(int32_t type)
{
    return "coll." + lower(et::collectiveTypeName(type));
}

std::vector<std::string> collectiveKinds()
{
    std::vector<std::string> kinds;
    for (int32_t type = 0; type <= static_cast<int32_t>(et::CollectiveType::Barrier); ++type)
        kinds.push_back(collectiveKind(type));
    return kinds;
}

std::vector<int64_t> classExponents(const std::string& gemmClass)
{
    constexpr int64_t maxExponent = 4 * 48;
    std::vector<int64_t> exponents;
    std::size_t start = 0;
    while (start <= gemmClass.size()) {
        std::size_t comma = gemmClass.find(',', start);
        std::string part =
            gemmClass.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (part.empty() || part.size() > 3 ||
            part.find_first_not_of("0123456789") != std::string::npos)
            return {};
        exponents.push_back(std::stoll(part));
        if (exponents.back() > maxExponent)
            return {};
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    if (exponents.size() != 4)
        return {};
    return exponents;
}

std::pair<int, std::string> sourceKey(const std::string& key)
{
    const std::size_t colon = key.find(':');
    const std::string position = key.substr(0, colon);
    if (colon == std::string::npos || position.empty() || position.size() > 2 ||
        position.find_first_not_of("0123456789") != std::string::npos ||
        std::stoull(position) >= maxTensorCount)
        return {-1, {}};
    std::string source = key.substr(colon + 1);
    if (source != freshSource && source != outputSource && source != inputSource)
        return {-1, {}};
    return {std::stoi(position), source};
}

} // namespace detail

using detail::classExponents;
using detail::collectiveKinds;

const char* quantityName(Quantity quantity)
{
    switch (quantity) {
    case Quantity::NumOps:
        return "num_ops";
    case Quantity::TensorSize:
        return "tensor_size";
    case Quantity::CommSize:
        return "comm_size";
    case Quantity::Duration:
        return "duration_us";
    }
    return "?";
}

std::string gemmClassOf(int64_t m, int64_t n, int64_t k, int64_t batch)
{
    std::string key;
    for (int64_t dim : {m, n, k, batch}) {
        auto exponent =
            std::llround(4.0 * std::log2(static_cast<double>(std::max<int64_t>(dim, 1))));
        key += (key.empty() ? "" : ",") + std::to_string(exponent);
    }
    return key;
}

std::array<int64_t, 4> gemmOfClass(const std::string& gemmClass)
{
    std::vector<int64_t> exponents = classExponents(gemmClass);
    if (exponents.empty())
        throw Error("GEMM class \"" + gemmClass +
                    "\": expected four exponents \"em,en,ek,eb\" in 0..192 (docs/synth.md)");
    std::array<int64_t, 4> shape{};
    for (std::size_t i = 0; i < 4; ++i) {
        double size = std::exp2(static_cast<double>(exponents[i]) / 4.0);
        shape[i] = i < 3 ? std::max<int64_t>(1, static_cast<int64_t>(size * 63.0 / 64.0))
                         : std::max<int64_t>(1, std::llround(size));
    }
    return shape;
}

int64_t gemmClassWeight(const std::string& gemmClass)
{
    int64_t weight = 0;
    for (int64_t exponent : classExponents(gemmClass))
        weight += exponent;
    return weight;
}

bool isKnownKind(const std::string& kind)
{
    if (kind == "host" || kind == "mem_load" || kind == "mem_store" || kind == "send" ||
        kind == "recv")
        return true;
    if (kind.rfind("comp.", 0) == 0)
        return et::opKindFromName(kind.substr(5)).has_value();
    std::vector<std::string> collectives = collectiveKinds();
    return std::find(collectives.begin(), collectives.end(), kind) != collectives.end();
}

double TraceModel::nodesPerRank() const
{
    uint64_t modelled = 0;
    for (const auto& entry : kinds)
        modelled += entry.second.count;
    return source.ranks == 0 ? 0.0 : static_cast<double>(modelled) / source.ranks;
}

Categorical TraceModel::kindMix() const
{
    Categorical mix;
    for (const auto& [name, stats] : kinds)
        mix[name] = stats.count;
    return mix;
}

Categorical TraceModel::collectiveMix() const
{
    Categorical mix;
    for (const auto& [name, stats] : kinds)
        if (name.rfind("coll.", 0) == 0)
            mix[name] = stats.count;
    return mix;
}

} // namespace etsim::workloads::synth
