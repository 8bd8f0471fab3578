#pragma once
// Conversion between etsim::EtNodeInfo (kernel/Extensions.h) and its wire form.

#include "cosim/wire/Messages.h"
#include "kernel/Extensions.h"

namespace etsim::cosim {

WireNodeInfo toWire(const EtNodeInfo& info);
EtNodeInfo fromWire(const WireNodeInfo& wire);

} // namespace etsim::cosim
