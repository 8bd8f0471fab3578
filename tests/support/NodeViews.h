#pragma once
// One line per node as a reader sees it, from either decode path (TraceNode or NodeView): id,
// name, type, dependencies, duration and every typed integer attribute, narrowed as the
// TraceNode getters narrow them. NodeViewTest and the trace-reader fuzzer compare the two
// paths with it.

#include "et_driver/NodeView.h"
#include "et_driver/TraceNode.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace etsim::test {

using et::Attr;
using et::NodeView;
using et::TraceNode;

inline constexpr Attr integerAttrs[] = {Attr::IsCpuOp,
                                        Attr::NumOps,
                                        Attr::TensorSize,
                                        Attr::CommType,
                                        Attr::CommSize,
                                        Attr::CommSrc,
                                        Attr::CommDst,
                                        Attr::CommTag,
                                        Attr::CommPriority,
                                        Attr::GemmM,
                                        Attr::GemmN,
                                        Attr::GemmK,
                                        Attr::GemmBatch};

template <typename T>
std::string optionalText(const std::optional<T>& value)
{
    return value ? std::to_string(static_cast<std::int64_t>(*value)) : "-";
}

inline std::string deps(const std::vector<std::uint64_t>& list)
{
    std::string out;
    for (std::uint64_t dep : list)
        out += std::to_string(dep) + ",";
    return out;
}

inline std::string describe(const TraceNode& node)
{
    std::string out = std::to_string(node.id) + " " + node.name + " " +
                      std::to_string(static_cast<int>(node.type)) + " " + deps(node.ctrlDeps) +
                      " " + deps(node.dataDeps) + " " + std::to_string(node.durationMicros);
    for (Attr attr : integerAttrs) {
        std::optional<std::int64_t> value;
        switch (attr) {
        case Attr::IsCpuOp:
            value = node.isCpuOp() ? std::optional<std::int64_t>(*node.isCpuOp()) : std::nullopt;
            break;
        case Attr::TensorSize:
            value = node.tensorSize()
                        ? std::optional<std::int64_t>(static_cast<std::int64_t>(*node.tensorSize()))
                        : std::nullopt;
            break;
        case Attr::CommType:
            value = node.commType();
            break;
        case Attr::CommSrc:
            value = node.commSrc();
            break;
        case Attr::CommDst:
            value = node.commDst();
            break;
        case Attr::CommTag:
            value = node.commTag();
            break;
        case Attr::CommPriority:
            value = node.commPriority();
            break;
        case Attr::CommSize:
            value = node.commSize();
            break;
        case Attr::NumOps:
            value = node.numOps();
            break;
        case Attr::GemmM:
            value = node.gemmM();
            break;
        case Attr::GemmN:
            value = node.gemmN();
            break;
        case Attr::GemmK:
            value = node.gemmK();
            break;
        default:
            value = node.gemmBatch();
            break;
        }
        out += " " + optionalText(value);
    }
    return out;
}

inline std::string describe(const NodeView& node)
{
    std::string out = std::to_string(node.id) + " " + std::string(node.name) + " " +
                      std::to_string(static_cast<int>(node.type)) + " " + deps(node.ctrlDeps) +
                      " " + deps(node.dataDeps) + " " + std::to_string(node.durationMicros);
    for (Attr attr : integerAttrs) {
        std::optional<std::int64_t> value = node.integer(attr);
        // The typed getters narrow to the field's type.
        if (value && attr == Attr::IsCpuOp)
            value = *value != 0;
        if (value && (attr == Attr::CommType || attr == Attr::CommSrc || attr == Attr::CommDst ||
                      attr == Attr::CommTag || attr == Attr::CommPriority))
            value = static_cast<std::int32_t>(*value);
        out += " " + optionalText(value);
    }
    return out;
}

} // namespace etsim::test
