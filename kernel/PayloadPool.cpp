#include "kernel/PayloadPool.h"

#include "kernel/Error.h"

#include <systemc>

#include <algorithm>
#include <exception>
#include <limits>
#include <typeinfo>
#include <utility>

namespace etsim {

// A pooled payload remembers its pool, its free list and its own buffer, so that free() needs
// no lookup and can restore the data pointer even if a user pointed it elsewhere. It is also
// its own fallback memory manager: when the pool is destroyed while the payload is still in
// use, it switches to itself and deletes itself on its last release().
class PayloadPool::Payload final : public tlm::tlm_generic_payload, private tlm::tlm_mm_interface {
public:
    Payload(PayloadPool* owner, FreeList* home, unsigned int capacity, std::uint32_t index)
        : tlm::tlm_generic_payload(owner)
        , owner(owner)
        , home(home)
        , capacity(capacity)
        , index(index)
        , buffer(capacity > 0 ? std::make_unique<unsigned char[]>(capacity) : nullptr)
    {
    }

    void detach()
    {
        owner = nullptr;
        set_mm(this);
    }

    PayloadPool* owner;
    FreeList* home;
    unsigned int capacity;
    std::uint32_t index;
    std::unique_ptr<unsigned char[]> buffer;
    bool pooled = false;

private:
    // Only reached after detach(): the pool is gone and nobody else owns this object.
    void free(tlm::tlm_generic_payload* /*payload*/) override { delete this; }
};

PayloadPool::PayloadPool(std::string name) : poolName(std::move(name)) {}

PayloadPool::~PayloadPool()
{
    if (counters.inUse > 0 && counters.inUse != reportedInUse) {
        // A destructor must not throw, and an embedding program may have made warnings throw.
        try {
            SC_REPORT_WARNING(reportType,
                              ("payload pool '" + poolName + "' destroyed with " +
                               std::to_string(counters.inUse) +
                               " payload(s) still in use; every acquire() needs a matching "
                               "release() (call check() at end_of_simulation to find leaks "
                               "earlier)")
                                  .c_str());
        } catch (...) {
        }
    }
    for (auto& payload : payloads)
        if (!payload->pooled) {
            // Its holders may still use or release it: hand the object over to itself.
            Payload* survivor = payload.release();
            survivor->detach();
        }
}

tlm::tlm_generic_payload& PayloadPool::acquire(unsigned int dataLength)
{
    FreeList& list = dataLength == 0 ? unbuffered : freeLists[dataLength];
    Payload* payload = nullptr;
    if (list.items.empty()) {
        if (payloads.size() >= std::numeric_limits<std::uint32_t>::max())
            throw Error("payload pool '" + poolName + "': more than 2^32 - 1 payloads created; " +
                        "transactions are not being released");
        payloads.push_back(std::make_unique<Payload>(
            this, &list, dataLength, static_cast<std::uint32_t>(payloads.size())));
        payload = payloads.back().get();
        ++list.owned;
        if (list.items.capacity() < list.owned)
            list.items.reserve(std::max(list.owned, 2 * list.items.capacity()));
        recycle(*payload);
        ++counters.created;
        counters.bufferBytes += dataLength;
    } else {
        payload = list.items.back();
        list.items.pop_back();
    }
    payload->pooled = false;
    payload->acquire();
    ++counters.acquired;
    ++counters.inUse;
    counters.peakInUse = std::max(counters.peakInUse, counters.inUse);
    return *payload;
}

std::uint32_t PayloadPool::indexOf(const tlm::tlm_generic_payload& payload) const
{
    if (typeid(payload) != typeid(Payload) || static_cast<const Payload&>(payload).owner != this)
        throw Error("payload pool '" + poolName +
                    "': asked for the number of a payload this pool did not hand out");
    return static_cast<const Payload&>(payload).index;
}

void PayloadPool::free(tlm::tlm_generic_payload* payload)
{
    if (payload == nullptr || typeid(*payload) != typeid(Payload) ||
        static_cast<Payload*>(payload)->owner != this) {
        SC_REPORT_ERROR(reportType,
                        ("payload pool '" + poolName +
                         "': free() of a payload this pool did not hand out; a payload must "
                         "return to the pool whose acquire() created it")
                            .c_str());
        return;
    }
    auto* pooled = static_cast<Payload*>(payload);
    if (pooled->pooled || pooled->get_ref_count() != 0) {
        SC_REPORT_ERROR(reportType,
                        ("payload pool '" + poolName + "': free() of a payload that is " +
                         (pooled->pooled ? "already back in the pool"
                                         : "still referenced (reference count " +
                                               std::to_string(pooled->get_ref_count()) + ")") +
                         "; return payloads only through release()")
                            .c_str());
        return;
    }
    recycle(*pooled);
    pooled->pooled = true;
    pooled->home->items.push_back(pooled); // capacity reserved in acquire(): no allocation
    --counters.inUse;
}

void PayloadPool::recycle(Payload& payload)
{
    // Frees set_extension and set_auto_extension extensions alike (and any already marked by
    // release_extension), leaving every slot empty.
    payload.free_all_extensions();
    payload.set_command(tlm::TLM_IGNORE_COMMAND);
    payload.set_address(0);
    payload.set_data_ptr(payload.buffer.get());
    payload.set_data_length(payload.capacity);
    payload.set_streaming_width(payload.capacity);
    payload.set_byte_enable_ptr(nullptr);
    payload.set_byte_enable_length(0);
    payload.set_dmi_allowed(false);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    payload.set_gp_option(tlm::TLM_MIN_PAYLOAD);
}

std::uint64_t PayloadPool::check()
{
    if (counters.inUse > 0) {
        SC_REPORT_WARNING(reportType,
                          ("payload pool '" + poolName + "': " + std::to_string(counters.inUse) +
                           " payload(s) still in use at " + sc_core::sc_time_stamp().to_string() +
                           " (acquired " + std::to_string(counters.acquired) +
                           " in total); every acquire() needs a matching release()")
                              .c_str());
    }
    reportedInUse = counters.inUse;
    return counters.inUse;
}

HeldPayloads::~HeldPayloads()
{
    // A destructor must not throw: a pool's free() reports (and may throw) only on misuse, which
    // hold()/release() rule out, and an embedding program may have made reports throw.
    try {
        releaseAll();
    } catch (...) {
    }
}

void HeldPayloads::hold(tlm::tlm_generic_payload& payload)
{
    if (!payload.has_mm())
        return;
    payload.acquire();
    std::uint32_t* held = references.find(&payload);
    if (held != nullptr)
        ++*held;
    else
        references.set(&payload, 1);
    ++count;
}

void HeldPayloads::release(tlm::tlm_generic_payload& payload)
{
    std::uint32_t* held = references.find(&payload);
    if (held == nullptr)
        return;
    if (--*held == 0)
        references.erase(&payload);
    --count;
    payload.release();
}

void HeldPayloads::releaseAll()
{
    // Taken out first, so that a release() that throws leaves nothing to be released twice.
    PayloadMap<std::uint32_t> held;
    std::swap(held, references);
    count = 0;
    held.forEach([](const void* key, std::uint32_t times) {
        // The keys are the payloads hold() was given, which are not const.
        auto* payload = static_cast<tlm::tlm_generic_payload*>(const_cast<void*>(key));
        for (std::uint32_t i = 0; i < times; ++i)
            // NOLINTNEXTLINE(clang-analyzer-unix.Malloc): the analyzer ignores the reference count
            payload->release();
    });
}

} // namespace etsim
