#pragma once
// Communicator (process) groups of collectives, as ASTRA-sim resolves them (spec 8.6): a
// COMM_COLL_NODE names its group by `pg_name`, a decimal id; "" and "0" mean all ranks. Groups
// come from a communicator-group JSON file given on the command line and from the PyTorch
// process-group list in the inputs of a `## process_group:init ##` METADATA_NODE (spec 6).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etsim::et {

struct ProcessGroup {
    // The group id as ASTRA-sim keys it (pg_name read as a decimal number).
    int64_t id = 0;
    // Global ranks of the members; empty means every rank.
    std::vector<int64_t> ranks;
};

// Whether pg_name selects the default group of all ranks ("" or "0").
bool isDefaultGroup(std::string_view pgName);

// pg_name as a group id: an optional sign and decimal digits that fit int32 (ASTRA-sim reads it
// with std::stoi); nullopt for anything else.
std::optional<int64_t> groupId(std::string_view pgName);

// Parses the inputs.values text of a process-group METADATA_NODE: the Python rendering of a
// one-element list holding a JSON array of objects with "pg_name" and "ranks" (spec 6), quoted
// with ' or ". Throws etsim::Error saying what does not match.
std::vector<ProcessGroup> parsePytorchProcessGroups(std::string_view inputsValues);

// Reads a communicator-group file: a JSON object whose keys are decimal group ids >= 1 and whose
// values are arrays of global ranks, e.g. {"1": [0, 1, 2, 3]}. Throws etsim::Error naming the
// file and the bad key.
std::vector<ProcessGroup> readCommGroupFile(const std::filesystem::path& file);

} // namespace etsim::et
