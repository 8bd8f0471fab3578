#pragma once
// Strong id types and the container indexed by them. With plain integers a rank index passed
// where a channel index is expected compiles silently and fails far away; as distinct enum
// types the mix-up is a compile error, and IdVector<RankId, T> accepts nothing but a RankId.

#include "kernel/Error.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace etsim {

/// One process of the distributed job (one .et file), numbered from 0.
enum class RankId : std::uint32_t {};
/// A Chakra ET node id, unique within one rank's trace.
enum class NodeId : std::uint64_t {};
/// An HBM channel within one device, numbered from 0.
enum class ChannelId : std::uint32_t {};
/// A bank within one HBM channel, numbered from 0.
enum class BankId : std::uint32_t {};
/// A fabric link within one platform, numbered from 0.
enum class LinkId : std::uint32_t {};
/// A process group (communicator) after the trace's group names have been resolved.
enum class ProcessGroupId : std::uint32_t {};

/// Marks a type as a strong id and names it in messages ("rank 3"). Specialise it for every
/// new id type; IdVector and the helpers below accept only types that have one.
template <typename Id>
struct IdTraits;

template <>
struct IdTraits<RankId> {
    static constexpr const char* name = "rank";
};
template <>
struct IdTraits<NodeId> {
    static constexpr const char* name = "node";
};
template <>
struct IdTraits<ChannelId> {
    static constexpr const char* name = "channel";
};
template <>
struct IdTraits<BankId> {
    static constexpr const char* name = "bank";
};
template <>
struct IdTraits<LinkId> {
    static constexpr const char* name = "link";
};
template <>
struct IdTraits<ProcessGroupId> {
    static constexpr const char* name = "process group";
};

template <typename T, typename = void>
struct IsStrongId : std::false_type {
};
template <typename T>
struct IsStrongId<T, std::void_t<decltype(IdTraits<T>::name)>> : std::is_enum<T> {
};
/// True for the id types declared above (and any later one with an IdTraits).
template <typename T>
inline constexpr bool isStrongId = IsStrongId<T>::value;

/// The raw number behind an id, for arithmetic and serialisation.
template <typename Id, typename = std::enable_if_t<isStrongId<Id>>>
constexpr std::underlying_type_t<Id> toUnderlying(Id id)
{
    return static_cast<std::underlying_type_t<Id>>(id);
}

/// The id after `id` (the caller guards against overflow of the underlying type).
template <typename Id, typename = std::enable_if_t<isStrongId<Id>>>
constexpr Id nextId(Id id)
{
    return static_cast<Id>(toUnderlying(id) + 1);
}

/// "rank 3", for messages.
template <typename Id, typename = std::enable_if_t<isStrongId<Id>>>
std::string toString(Id id)
{
    return std::string(IdTraits<Id>::name) + ' ' + std::to_string(toUnderlying(id));
}

template <typename Id, typename = std::enable_if_t<isStrongId<Id>>>
std::ostream& operator<<(std::ostream& out, Id id)
{
    return out << IdTraits<Id>::name << ' ' << toUnderlying(id);
}

/// The half-open range of ids [first, last), so `for (RankId rank : ranks.ids())` works.
template <typename Id>
class IdRange {
    static_assert(isStrongId<Id>, "IdRange needs a strong id type from kernel/Ids.h");

public:
    class Iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = Id;
        using difference_type = std::ptrdiff_t;
        using pointer = const Id*;
        using reference = Id;

        constexpr explicit Iterator(Id id) : current(id) {}
        constexpr Id operator*() const { return current; }
        constexpr Iterator& operator++()
        {
            current = nextId(current);
            return *this;
        }
        constexpr Iterator operator++(int)
        {
            Iterator before = *this;
            ++*this;
            return before;
        }
        constexpr bool operator==(const Iterator& other) const { return current == other.current; }
        constexpr bool operator!=(const Iterator& other) const { return current != other.current; }

    private:
        Id current;
    };

    constexpr IdRange(Id first, Id last) : first(first), last(last) {}
    constexpr Iterator begin() const { return Iterator(first); }
    constexpr Iterator end() const { return Iterator(last); }
    constexpr std::size_t size() const
    {
        return toUnderlying(last) > toUnderlying(first)
                   ? static_cast<std::size_t>(toUnderlying(last) - toUnderlying(first))
                   : 0;
    }
    constexpr bool empty() const { return size() == 0; }

private:
    Id first;
    Id last;
};

/// A vector whose elements are addressed by one id type only: indexing with another id type
/// or with a plain integer does not compile (the deleted overloads below make the error say
/// so). Iteration by value works as for std::vector; ids() gives the matching ids.
template <typename Id, typename T>
class IdVector {
    static_assert(isStrongId<Id>, "IdVector is indexed by a strong id type from kernel/Ids.h");
    using Storage = std::vector<T>;

public:
    using value_type = T;
    using size_type = std::size_t;
    using reference = typename Storage::reference;
    using const_reference = typename Storage::const_reference;
    using iterator = typename Storage::iterator;
    using const_iterator = typename Storage::const_iterator;

    IdVector() = default;
    /// `count` value-initialised elements, ids 0 .. count-1.
    explicit IdVector(std::size_t count) : items(count) {}
    IdVector(std::size_t count, const T& value) : items(count, value) {}

    /// Unchecked access, like std::vector::operator[].
    reference operator[](Id id) { return items[index(id)]; }
    const_reference operator[](Id id) const { return items[index(id)]; }
    template <typename Other>
    reference operator[](Other) = delete;
    template <typename Other>
    const_reference operator[](Other) const = delete;

    /// Checked access; throws etsim::Error naming the id and the valid range.
    reference at(Id id)
    {
        checkRange(id);
        return items[index(id)];
    }
    const_reference at(Id id) const
    {
        checkRange(id);
        return items[index(id)];
    }
    template <typename Other>
    reference at(Other) = delete;
    template <typename Other>
    const_reference at(Other) const = delete;

    bool contains(Id id) const { return index(id) < items.size(); }

    /// Appends an element and returns its id.
    Id append(T value)
    {
        items.push_back(std::move(value));
        return lastId();
    }
    /// Constructs an element at the end and returns its id.
    template <typename... Args>
    Id emplace(Args&&... args)
    {
        items.emplace_back(std::forward<Args>(args)...);
        return lastId();
    }

    std::size_t size() const { return items.size(); }
    bool empty() const { return items.empty(); }
    void resize(std::size_t count) { items.resize(count); }
    void resize(std::size_t count, const T& value) { items.resize(count, value); }
    void reserve(std::size_t count) { items.reserve(count); }
    void clear() { items.clear(); }

    /// The ids of the current elements, in order.
    IdRange<Id> ids() const { return IdRange<Id>(Id{}, static_cast<Id>(items.size())); }

    iterator begin() { return items.begin(); }
    iterator end() { return items.end(); }
    const_iterator begin() const { return items.begin(); }
    const_iterator end() const { return items.end(); }

    bool operator==(const IdVector& other) const { return items == other.items; }
    bool operator!=(const IdVector& other) const { return items != other.items; }

private:
    static std::size_t index(Id id) { return static_cast<std::size_t>(toUnderlying(id)); }
    Id lastId() const { return static_cast<Id>(items.size() - 1); }

    void checkRange(Id id) const
    {
        if (contains(id))
            return;
        std::string valid = items.empty() ? std::string("the container is empty")
                                          : "valid: " + toString(Id{}) + " to " +
                                                toString(static_cast<Id>(items.size() - 1));
        throw Error("IdVector::at: " + toString(id) + " is out of range (" + valid +
                    "); the id does not belong to this container's platform or trace");
    }

    Storage items;
};

} // namespace etsim
