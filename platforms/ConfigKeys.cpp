#include "platforms/ConfigKeys.h"

#include "cosim/CosimConfig.h"
#include "kernel/Error.h"
#include "models/accel/AccelConfig.h"
#include "models/hbm/HbmConfig.h"
#include "models/net/NetConfig.h"
#include "platforms/PlatformConfig.h"

namespace etsim::platform {

std::vector<ComponentKeys> configKeyTables()
{
    auto entry = [](const auto& table, const char* doc) {
        return ComponentKeys{table.component(), doc, table.describe()};
    };
    return {entry(platformParams(), "docs/platforms.md"),
            entry(accel::accelParams(), "docs/accel.md"),
            entry(hbm::hbmParams(), "docs/hbm.md"),
            entry(net::netParams(), "docs/network.md"),
            entry(net::dimParams(), "docs/network.md"),
            entry(net::fatTreeParams(), "docs/network.md"),
            entry(cosim::cosimParams(), "docs/cosim.md")};
}

ComponentKeys configKeys(std::string_view name)
{
    std::string known;
    for (ComponentKeys& table : configKeyTables()) {
        if (table.component == name)
            return table;
        known += (known.empty() ? "" : ", ") + table.component;
    }
    throw Error("unknown component \"" + std::string(name) + "\"; one of " + known);
}

std::string keyTableBegin(std::string_view component)
{
    return "<!-- keys: " + std::string(component) +
           " (generated: etsim config keys --markdown; do not edit) -->";
}

std::string keyTableEnd()
{
    return "<!-- end of keys -->";
}

std::string refreshKeyTables(const std::string& text, const std::vector<ComponentKeys>& tables)
{
    std::string result = text;
    for (const ComponentKeys& table : tables) {
        const std::string begin = keyTableBegin(table.component);
        const std::size_t at = result.find(begin);
        if (at == std::string::npos)
            continue;
        const std::size_t bodyStart = at + begin.size();
        const std::size_t end = result.find(keyTableEnd(), bodyStart);
        if (end == std::string::npos)
            throw Error("the key table of " + table.component + " opens with \"" + begin +
                        "\" but has no \"" + keyTableEnd() + "\" line after it");
        result.replace(bodyStart, end - bodyStart, "\n" + paramMarkdown(table.keys));
    }
    return result;
}

} // namespace etsim::platform
