#include "workloads/Presets.h"

namespace etsim::workloads {

namespace {

TransformerModel shape(std::string name,
                       uint32_t layers,
                       uint32_t hidden,
                       uint32_t heads,
                       uint32_t kvHeads,
                       uint32_t ffn,
                       uint32_t vocab,
                       uint32_t seqLen)
{
    TransformerModel m;
    m.name = std::move(name);
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kvHeads = kvHeads;
    m.ffn = ffn;
    m.vocab = vocab;
    m.seqLen = seqLen;
    return m;
}

} // namespace

std::vector<ModelPreset> modelPresets()
{
    std::vector<ModelPreset> presets;

    TransformerModel gpt3 = shape("gpt3-175b", 96, 12288, 96, 96, 49152, 50257, 2048);
    gpt3.tiedEmbeddings = true;
    // Vocabulary padded to a multiple of 128 x 8 as Megatron-LM does, so TP up to 8 divides it.
    gpt3.vocab = 51200;
    presets.push_back({"gpt3-175b",
                       "Brown et al. 2020, table 2.1 (GPT-3 175B); vocabulary 50257 padded to "
                       "51200",
                       gpt3});

    TransformerModel llama8 = shape("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192);
    llama8.gatedMlp = true;
    presets.push_back({"llama3-8b", "Meta Llama 3 8B config.json (Llama 3 herd, 2024)", llama8});

    TransformerModel llama70 = shape("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192);
    llama70.gatedMlp = true;
    presets.push_back({"llama3-70b", "Meta Llama 3 70B config.json (Llama 3 herd, 2024)", llama70});

    TransformerModel mixtral = shape("mixtral-8x7b", 32, 4096, 32, 8, 14336, 32000, 4096);
    mixtral.gatedMlp = true;
    mixtral.experts = 8;
    mixtral.topK = 2;
    presets.push_back({"mixtral-8x7b",
                       "Mixtral of Experts (Jiang et al. 2024), Mixtral-8x7B config.json; 8 "
                       "experts, top-2",
                       mixtral});
    return presets;
}

std::optional<ModelPreset> findModelPreset(std::string_view name)
{
    for (ModelPreset& preset : modelPresets())
        if (preset.name == name)
            return preset;
    return std::nullopt;
}

} // namespace etsim::workloads
