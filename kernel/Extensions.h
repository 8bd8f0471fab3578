#pragma once
// The payload extension that tells a hardware model what one transaction stands for
// (EtNodeInfo, kernel/NodeInfo.h). Models read it and never see the trace itself.

#include "kernel/NodeInfo.h"

#include <tlm>

namespace etsim {

/// The TLM extension carrying an EtNodeInfo. Initiators attach it with set_extension (the
/// payload pool frees it when the payload returns); models read it with get() or find().
class EtNodeExtension final : public tlm::tlm_extension<EtNodeExtension> {
public:
    EtNodeExtension() = default;
    explicit EtNodeExtension(EtNodeInfo info);

    tlm::tlm_extension_base* clone() const override;
    /// Copies the whole EtNodeInfo; throws etsim::Error if `other` is another extension type.
    void copy_from(const tlm::tlm_extension_base& other) override;

    /// The extension attached to `payload`, or nullptr.
    static EtNodeExtension* find(const tlm::tlm_generic_payload& payload);
    /// The extension attached to `payload`; throws etsim::Error naming the payload if absent.
    static EtNodeExtension& get(const tlm::tlm_generic_payload& payload);

    EtNodeInfo info;
};

} // namespace etsim
