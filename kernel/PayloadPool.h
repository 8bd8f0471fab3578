#pragma once
// Recycled tlm_generic_payload objects for one initiator. After warm-up a transaction costs no
// allocation: a payload whose last reference is released goes back to a free list keyed by
// its data length and is handed out again by the next acquire() of that length.
//
// Protocol: acquire() returns a payload that already holds one reference, owned by the
// caller. Whoever else keeps the payload beyond a call (a PEQ, a target finishing later)
// calls payload.acquire() and later payload.release(); the caller releases its own reference
// when done. The last release() returns the payload here (tlm_mm_interface::free), where its
// extensions are freed and its fields reset, so a reused payload carries nothing stale.
//
// Teardown: every holder gives its references back, also when a run is abandoned with
// transactions in flight (a deadlock, an error report that stopped the kernel). An initiator
// releases the references it still holds in its destructor; a target keeps the references it
// took in a HeldPayloads, which releases them in its destructor. Destroy the targets before the
// initiator that owns the pool, so that every payload returns here while the pool exists and
// its destructor has nothing to report. In the other order nothing leaks either: the pool
// warns, detaches the payloads still in use, and the last holder's release() deletes them.
//
// One pool per initiator (owned by it, named after it); not thread-safe, like SystemC.

#include "kernel/FlatMap.h"

#include <tlm>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace etsim {

/// Counters of one pool; all counts are of payloads unless stated otherwise.
struct PayloadPoolStats {
    /// Payload objects the pool has constructed (each one an allocation).
    std::uint64_t created = 0;
    /// Handed out by acquire() and not yet returned.
    std::uint64_t inUse = 0;
    /// Highest value of inUse so far.
    std::uint64_t peakInUse = 0;
    /// acquire() calls since construction.
    std::uint64_t acquired = 0;
    /// Data buffer memory owned by the pool's payloads, B.
    std::uint64_t bufferBytes = 0;
};

class PayloadPool final : public tlm::tlm_mm_interface {
public:
    /// Message type of the pool's SC_REPORT_WARNING/ERROR reports.
    static constexpr const char* reportType = "etsim/PayloadPool";

    /// `name` identifies the pool in reports, e.g. the owning initiator's name + ".pool".
    explicit PayloadPool(std::string name);
    /// Reports payloads still in use (SC_REPORT_WARNING) unless check() already reported the
    /// same count. Such payloads are not deleted under their holders: they are detached from
    /// the pool and delete themselves on their last release().
    ~PayloadPool() override;
    PayloadPool(const PayloadPool&) = delete;
    PayloadPool& operator=(const PayloadPool&) = delete;
    PayloadPool(PayloadPool&&) = delete;
    PayloadPool& operator=(PayloadPool&&) = delete;

    /// A payload without data buffer (data pointer null, length 0), holding one reference.
    tlm::tlm_generic_payload& acquire() { return acquire(0); }
    /// A payload whose data pointer is a pool-owned buffer of `dataLength` bytes (data length
    /// and streaming width set to it), holding one reference. The buffer is zeroed when first
    /// allocated; on reuse it holds whatever the previous transaction left there.
    tlm::tlm_generic_payload& acquire(unsigned int dataLength);

    /// Called by tlm_generic_payload::release() when the reference count drops to zero; not
    /// for direct use. Reports SC_REPORT_ERROR for a payload that is not this pool's, is
    /// already back in the pool, or is still referenced.
    void free(tlm::tlm_generic_payload* payload) override;

    /// Leak check for end_of_simulation: reports payloads still in use with
    /// SC_REPORT_WARNING (pool name, count, simulated time) and returns their number.
    std::uint64_t check();

    const std::string& name() const { return poolName; }
    const PayloadPoolStats& stats() const { return counters; }
    /// Payloads handed out and not yet returned.
    std::uint64_t inUse() const { return counters.inUse; }
    /// The payload's number in this pool: dense from 0 in creation order and fixed for the
    /// pool's life, so an initiator can index what it keeps per transaction by it instead of
    /// hashing the payload's address. Throws etsim::Error for a payload this pool did not
    /// create.
    std::uint32_t indexOf(const tlm::tlm_generic_payload& payload) const;

private:
    class Payload;
    struct FreeList {
        std::vector<Payload*> items;
        // Payloads of this length in existence; `items` keeps this much capacity so that
        // returning a payload never allocates.
        std::size_t owned = 0;
    };

    static void recycle(Payload& payload);

    std::string poolName;
    PayloadPoolStats counters;
    // Payloads without a data buffer, the common case (execution-protocol transactions),
    // skip the map.
    FreeList unbuffered;
    // Node-based map: a FreeList never moves, so each payload keeps a pointer to its own.
    std::unordered_map<unsigned int, FreeList> freeLists;
    std::vector<std::unique_ptr<Payload>> payloads;
    // The in-use count check() last reported, so the destructor does not repeat it.
    std::uint64_t reportedInUse = 0;
};

/// The references a target holds on payloads it accepted (one per hold()), given back by
/// release() when the transaction ends, and at the latest by the destructor, so that a run
/// abandoned mid-transaction leaks nothing. Payloads without a memory manager are not
/// reference counted (the initiator owns them) and are not tracked.
class HeldPayloads {
public:
    HeldPayloads() = default;
    /// Releases every reference still held.
    ~HeldPayloads();
    HeldPayloads(const HeldPayloads&) = delete;
    HeldPayloads& operator=(const HeldPayloads&) = delete;
    HeldPayloads(HeldPayloads&&) = delete;
    HeldPayloads& operator=(HeldPayloads&&) = delete;

    /// Takes a reference on `payload` (payload.acquire()) if it has a memory manager.
    void hold(tlm::tlm_generic_payload& payload);
    /// Gives back one reference hold() took; a payload not held here is left alone (it has no
    /// memory manager, so hold() took nothing).
    void release(tlm::tlm_generic_payload& payload);
    /// Gives back every reference still held.
    void releaseAll();
    /// References held.
    std::size_t size() const { return count; }

private:
    // Payload -> references held on it (more than one only if it arrived more than once).
    PayloadMap<std::uint32_t> references;
    std::size_t count = 0;
};

} // namespace etsim
