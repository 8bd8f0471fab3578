#pragma once
// The buffer organisation of a channel: where its accepted requests wait and when there is
// room for more. One instance per channel covers its pseudo-channels (a DRAMSys controller
// counts its buffer over the whole channel); each PC tells it what it stores and what its
// column commands take out. One file pair per organisation.

#include "models/hbm/HbmConfig.h"

#include <cstdint>
#include <memory>

namespace etsim::hbm {

class RequestBufferIf {
public:
    virtual ~RequestBufferIf() = default;
    /// The name used in configs ("bankwise").
    virtual const char* name() const = 0;
    /// True for DRAMSys's organisations: a transaction enters the channel whole, once hasRoom
    /// holds for all its bursts; a PC keeps reads and writes in one arrival-ordered list and
    /// each of its banks offers one request (its first row hit, else its oldest). False: the
    /// bursts of a transaction enter their PC's read or write queue one at a time, as that
    /// queue has room, and the scheduler serves the two queues with write drains.
    virtual bool perBank() const = 0;
    /// Whether `entries` more requests of that direction for PC `pc` (its index in the
    /// channel) fit now.
    virtual bool hasRoom(std::uint32_t pc, bool write, std::uint64_t entries) const = 0;
    /// PC `pc` stored a request for `bank` (PcTiming bank index).
    virtual void stored(std::uint32_t pc, std::uint32_t bank, bool write) = 0;
    /// A column command of PC `pc` took a request for `bank` out.
    virtual void removed(std::uint32_t pc, std::uint32_t bank, bool write) = 0;
};

/// The buffer of one channel that `config` (validated) selects.
std::unique_ptr<RequestBufferIf> makeRequestBuffer(const HbmConfig& config);

} // namespace etsim::hbm
