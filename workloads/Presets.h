#pragma once
// Well-known models with their published shapes, for `etsim gen transformer --preset NAME`.

#include "workloads/Transformer.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace etsim::workloads {

struct ModelPreset {
    std::string name;
    // Where the shapes come from, one line.
    std::string source;
    TransformerModel model;
};

// gpt3-175b, llama3-8b, llama3-70b, mixtral-8x7b, in this order.
std::vector<ModelPreset> modelPresets();
// The preset of that name, or nullopt.
std::optional<ModelPreset> findModelPreset(std::string_view name);

} // namespace etsim::workloads
