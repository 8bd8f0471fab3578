#pragma once
// The key tables of every configurable component of a platform file, in the order a platform
// file nests them: what `etsim config keys` prints and what docs/ key tables are generated
// from (docs/config.md, "Key tables").

#include "kernel/ParamTable.h"

#include <string>
#include <string_view>
#include <vector>

namespace etsim::platform {

struct ComponentKeys {
    std::string component; ///< "accel", "hbm", "fabric", "fabric.dim", ...
    std::string doc;       ///< the docs/ page that holds its table, "docs/accel.md"
    std::vector<ParamInfo> keys;
};

/// Every component's keys: platform, accel, hbm, fabric, fabric.dim, fabric.fat_tree.
std::vector<ComponentKeys> configKeyTables();

/// The component named `name`; throws etsim::Error listing the names for an unknown one.
ComponentKeys configKeys(std::string_view name);

/// The lines that open and close a component's generated table in its docs page.
std::string keyTableBegin(std::string_view component);
std::string keyTableEnd();

/// `text` (a docs page) with the table of every component it marks replaced by the
/// current table; throws etsim::Error when a begin line has no end line.
std::string refreshKeyTables(const std::string& text, const std::vector<ComponentKeys>& tables);

} // namespace etsim::platform
