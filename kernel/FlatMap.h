#pragma once
// A flat open-addressing map (linear probing, backward-shift deletion, so no tombstones) for
// what models keep per item in flight: per transaction, keyed by the payload's address (the
// initiator a fan-in must answer, the socket a router used: PayloadMap), or per tensor id (the
// residency model's resident tensors and their eviction order). Sized by the items present at once,
// so after warm-up an insertion allocates nothing and a lookup touches one or two cache lines,
// where a node-based hash map allocated and freed a node per item (bench/README.md, whole-run
// profiles). Keys are pointers or unsigned integers, any value allowed. Header-only, free of
// SystemC.

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace etsim {

template <typename Key, typename Value>
class FlatMap {
public:
    FlatMap() : entries(16) {}

    /// Sets the value of `key`, adding it if absent.
    void set(Key key, Value value)
    {
        std::size_t slot = probe(key);
        if (entries[slot].used) {
            entries[slot].value = std::move(value);
            return;
        }
        // Load at most one half: short probes on pointers that share their low bits.
        if (2 * (count + 1) > entries.size()) {
            grow();
            slot = probe(key);
        }
        entries[slot] = Entry{key, std::move(value), true};
        ++count;
    }

    /// The value of `key`, or null; valid until the next set() or erase().
    Value* find(Key key)
    {
        Entry& entry = entries[probe(key)];
        return entry.used ? &entry.value : nullptr;
    }
    const Value* find(Key key) const
    {
        const Entry& entry = entries[probe(key)];
        return entry.used ? &entry.value : nullptr;
    }

    /// Removes `key`; false if it was absent.
    bool erase(Key key)
    {
        std::size_t hole = probe(key);
        if (!entries[hole].used)
            return false;
        // Backward shift: later entries of the same run move into the hole unless their home
        // lies cyclically after it (they would then be found before reaching it).
        const std::size_t mask = entries.size() - 1;
        for (std::size_t next = (hole + 1) & mask; entries[next].used; next = (next + 1) & mask) {
            std::size_t home = homeOf(entries[next].key);
            if (((next - home) & mask) >= ((next - hole) & mask)) {
                entries[hole] = std::move(entries[next]);
                hole = next;
            }
        }
        entries[hole] = Entry{};
        --count;
        return true;
    }

    std::size_t size() const { return count; }
    bool empty() const { return count == 0; }

    /// Calls fn(key, value) for every entry, in no particular order.
    template <typename Fn>
    void forEach(Fn&& fn) const
    {
        for (const Entry& entry : entries)
            if (entry.used)
                fn(entry.key, entry.value);
    }

    void clear()
    {
        for (Entry& entry : entries)
            entry = Entry{};
        count = 0;
    }

private:
    struct Entry {
        Key key{};
        Value value{};
        bool used = false;
    };

    std::size_t homeOf(Key key) const
    {
        // Fibonacci hashing: payloads are allocated at regular strides and tensor ids are dense,
        // and the multiply spreads them; the top bits index the table.
        std::uint64_t bits = 0;
        if constexpr (std::is_pointer_v<Key>)
            bits = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(key));
        else
            bits = static_cast<std::uint64_t>(key);
        return static_cast<std::size_t>((bits * 0x9E3779B97F4A7C15ULL) >> 32) &
               (entries.size() - 1);
    }

    // The slot holding `key`, or the empty slot where it would go.
    std::size_t probe(Key key) const
    {
        const std::size_t mask = entries.size() - 1;
        std::size_t slot = homeOf(key);
        while (entries[slot].used && entries[slot].key != key)
            slot = (slot + 1) & mask;
        return slot;
    }

    void grow()
    {
        std::vector<Entry> old(2 * entries.size());
        old.swap(entries);
        count = 0;
        for (Entry& entry : old)
            if (entry.used) {
                entries[probe(entry.key)] = std::move(entry);
                ++count;
            }
    }

    std::vector<Entry> entries; // a power of two of slots
    std::size_t count = 0;
};

/// Per transaction in flight, keyed by the payload's address.
template <typename Value>
using PayloadMap = FlatMap<const void*, Value>;

} // namespace etsim
