#pragma once
// Typed statistics tree. Each model gets a StatGroup (its slot in the tree, e.g.
// platform.rank0.hbm.channel3), creates its stats there once at construction, and keeps
// references to them: an update is then an inline add or compare, never a lookup by name.
// A group owns its stats and child groups; the tree must outlive the models that hold
// references into it (the platform declares its root group before its children).
//
// Simulated time is passed in as integer picoseconds, so the stats are plain C++ objects
// that tests drive without a SystemC kernel; toPicoseconds() (kernel/ScTime.h) converts an
// sc_time.
//
// Two writers walk the tree: statsToJson/writeStatsJson (nested objects, one per group) and
// writeStatsText (aligned "path  value unit  description" lines). docs/outputs.md shows both.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace etsim {

/// The measurement window a stat covers: [startPs, endPs] in picoseconds of simulated time.
struct StatWindow {
    std::uint64_t startPs = 0;
    std::uint64_t endPs = 0;

    /// Length of the window in seconds.
    double seconds() const { return static_cast<double>(endPs - startPs) * 1e-12; }
};

class Counter;
class Scalar;
class Distribution;
class TimeWeightedAverage;
class Formula;
class WallProfile;

/// Double dispatch over the stat kinds, so writers live outside the stats.
class StatVisitor {
public:
    virtual ~StatVisitor() = default;
    virtual void visit(const Counter& stat) = 0;
    virtual void visit(const Scalar& stat) = 0;
    virtual void visit(const Distribution& stat) = 0;
    virtual void visit(const TimeWeightedAverage& stat) = 0;
    virtual void visit(const Formula& stat) = 0;
};

/// A named, described quantity with a unit ("B", "s", "FLOP"; empty for plain counts).
class Stat {
public:
    Stat(std::string name, std::string unit, std::string description);
    virtual ~Stat() = default;
    Stat(const Stat&) = delete;
    Stat& operator=(const Stat&) = delete;

    const std::string& name() const { return statName; }
    const std::string& unit() const { return statUnit; }
    const std::string& description() const { return statDescription; }
    /// Short kind name used by the writers: "counter", "scalar", "distribution", ...
    virtual const char* kind() const = 0;

    /// Starts a new measurement window at nowPs (ps), e.g. at the end of a warm-up phase.
    virtual void reset(std::uint64_t nowPs) = 0;
    virtual void accept(StatVisitor& visitor) const = 0;

private:
    std::string statName;
    std::string statUnit;
    std::string statDescription;
};

/// A monotonically counted integer: requests served, bytes moved, nodes finished.
class Counter final : public Stat {
public:
    using Stat::Stat;

    Counter& operator++()
    {
        ++count;
        return *this;
    }
    Counter& operator+=(std::uint64_t amount)
    {
        count += amount;
        return *this;
    }
    void set(std::uint64_t value) { count = value; }
    std::uint64_t value() const { return count; }

    const char* kind() const override { return "counter"; }
    void reset(std::uint64_t /*nowPs*/) override { count = 0; }
    void accept(StatVisitor& visitor) const override { visitor.visit(*this); }

private:
    std::uint64_t count = 0;
};

/// A real-valued quantity in its unit: energy in J, busy time in s, work in FLOP.
class Scalar final : public Stat {
public:
    using Stat::Stat;

    Scalar& operator+=(double amount)
    {
        current += amount;
        return *this;
    }
    /// A time in seconds added as whole picoseconds, summed exactly: the same total whatever
    /// the grouping of the additions (a model that adds one slice at a time and one that adds
    /// a run of slices at once agree to the last bit).
    void addPicoseconds(std::uint64_t ps) { picoseconds += ps; }
    void set(double value)
    {
        current = value;
        picoseconds = 0;
    }
    double value() const { return current + static_cast<double>(picoseconds) * 1e-12; }

    const char* kind() const override { return "scalar"; }
    void reset(std::uint64_t /*nowPs*/) override
    {
        current = 0.0;
        picoseconds = 0;
    }
    void accept(StatVisitor& visitor) const override { visitor.visit(*this); }

private:
    double current = 0.0;
    std::uint64_t picoseconds = 0;
};

/// Streaming summary of samples (latencies, sizes): count, sum, min, max, mean, population
/// standard deviation (Welford's update, stable for long runs) and a histogram. No sample
/// is stored. With bounds b0 < b1 < ... < bn-1 the histogram has n+1 buckets:
/// (-inf, b0), [b0, b1), ..., [bn-1, +inf).
///
/// A distribution made with a `quantum` takes whole numbers of quanta instead (latencies in
/// ps reported in ns: quantum 1e-3) and keeps its sums as exact integers, so that n equal
/// samples added at once (sampleQuanta(q, n)) leave it as n single samples would, to the bit.
class Distribution final : public Stat {
public:
    /// Throws etsim::Error if the bounds are not finite and strictly increasing, or `quantum`
    /// is negative or not finite. `quantum` 0: samples are real numbers (sample()).
    Distribution(std::string name,
                 std::string unit,
                 std::string description,
                 std::vector<double> bucketBounds,
                 double quantum = 0.0);

    /// Adds one sample, in the stat's unit. NaN samples are rejected with etsim::Error, as is
    /// any call on a distribution of quanta.
    void sample(double value);
    /// Adds `times` samples of `quanta` quanta each (a distribution made with a quantum only;
    /// etsim::Error otherwise).
    void sampleQuanta(std::uint64_t quanta, std::uint64_t times = 1);

    std::uint64_t count() const { return samples; }
    double sum() const;
    /// Smallest and largest sample; 0 while the distribution is empty.
    double min() const;
    double max() const;
    /// 0 while the distribution is empty.
    double mean() const;
    /// Population standard deviation (divides by count); 0 for fewer than two samples.
    double stddev() const;
    const std::vector<double>& bounds() const { return bucketBounds; }
    /// bounds().size() + 1 counts; see the class comment for the bucket ranges.
    const std::vector<std::uint64_t>& bucketCounts() const { return buckets; }

    const char* kind() const override { return "distribution"; }
    void reset(std::uint64_t nowPs) override;
    void accept(StatVisitor& visitor) const override { visitor.visit(*this); }

private:
    std::vector<double> bucketBounds;
    std::vector<std::uint64_t> buckets;
    std::uint64_t samples = 0;
    double total = 0.0;
    double lowest = std::numeric_limits<double>::infinity();
    double highest = -std::numeric_limits<double>::infinity();
    double runningMean = 0.0;
    double squaredDeviations = 0.0;
    // The bucket of the last sample (a hint; any index up to bounds().size() is valid).
    std::size_t lastBucket = 0;
    std::size_t bucketOf(double value);
    // Distributions of quanta: exact integer moments (the squares need 128 bits: 10^8
    // latencies of 10^6 ps square to 10^20).
    __extension__ using Wide = unsigned __int128;
    double quantum = 0.0;
    Wide quantaSum = 0;
    Wide quantaSquares = 0;
    std::uint64_t fewestQuanta = 0;
    std::uint64_t mostQuanta = 0;
};

/// A value held over simulated time (queue occupancy, busy = 1 / idle = 0) and its average
/// over the window [start, now], each value weighted by how long it was held. Fed with the
/// changes only: set(timePs, value) means "value from timePs on".
class TimeWeightedAverage final : public Stat {
public:
    /// The window starts at startPs (ps) with initialValue held.
    TimeWeightedAverage(std::string name,
                        std::string unit,
                        std::string description,
                        double initialValue = 0.0,
                        std::uint64_t startPs = 0);

    /// The held value becomes `value` at timePs (ps). Throws etsim::Error if timePs is
    /// earlier than the previous change: time never runs backwards.
    void set(std::uint64_t timePs, double value)
    {
        if (timePs < lastChangePs)
            throwTimeWentBack(timePs);
        area += current * static_cast<double>(timePs - lastChangePs);
        lastChangePs = timePs;
        current = value;
    }
    /// Adds delta to the held value at timePs (e.g. +1 on enqueue, -1 on dequeue).
    void add(std::uint64_t timePs, double delta) { set(timePs, current + delta); }

    /// Average over [windowStart(), nowPs]; the held value if the window is empty. Throws
    /// etsim::Error if nowPs is earlier than the last change.
    double average(std::uint64_t nowPs) const;
    double value() const { return current; }
    std::uint64_t windowStartPs() const { return startPs; }

    const char* kind() const override { return "time_weighted_average"; }
    /// Keeps the held value and starts averaging afresh at nowPs.
    void reset(std::uint64_t nowPs) override;
    void accept(StatVisitor& visitor) const override { visitor.visit(*this); }

private:
    [[noreturn]] void throwTimeWentBack(std::uint64_t timePs) const;

    double current;
    std::uint64_t startPs;
    std::uint64_t lastChangePs;
    double area = 0.0; // sum of value x held time in ps since startPs, up to lastChangePs
};

/// A value derived at output time from other stats, e.g. bandwidth = bytes / window length.
/// The callback receives the formula's window: from construction or the last reset to the
/// time the writer was asked to report.
class Formula final : public Stat {
public:
    using Compute = std::function<double(const StatWindow& window)>;

    Formula(std::string name,
            std::string unit,
            std::string description,
            Compute compute,
            std::uint64_t startPs = 0);

    /// Evaluates the callback over [window start, nowPs].
    double value(std::uint64_t nowPs) const;
    std::uint64_t windowStartPs() const { return startPs; }

    const char* kind() const override { return "formula"; }
    void reset(std::uint64_t nowPs) override { startPs = nowPs; }
    void accept(StatVisitor& visitor) const override { visitor.visit(*this); }

private:
    Compute compute;
    std::uint64_t startPs;
};

/// A node of the tree: stats and child groups, both owned, both kept in creation order.
/// Names are unique per group across stats and child groups, non-empty, without dots,
/// whitespace or control characters; violations throw etsim::Error naming the full path.
class StatGroup {
public:
    /// A root group (or one to be adopted later); `name` is the first part of every path.
    explicit StatGroup(std::string name);
    StatGroup(const StatGroup&) = delete;
    StatGroup& operator=(const StatGroup&) = delete;

    const std::string& name() const { return groupName; }
    /// Dotted path from the root, e.g. "platform.rank0.hbm".
    std::string path() const;

    /// Creates a child group.
    StatGroup& addGroup(const std::string& name);
    /// Takes ownership of a group built elsewhere (e.g. by a model's factory).
    StatGroup& adoptGroup(std::unique_ptr<StatGroup> group);

    Counter&
    addCounter(const std::string& name, const std::string& unit, const std::string& description);
    Scalar&
    addScalar(const std::string& name, const std::string& unit, const std::string& description);
    /// `quantum`: see Distribution.
    Distribution& addDistribution(const std::string& name,
                                  const std::string& unit,
                                  const std::string& description,
                                  std::vector<double> bucketBounds,
                                  double quantum = 0.0);
    TimeWeightedAverage& addTimeWeightedAverage(const std::string& name,
                                                const std::string& unit,
                                                const std::string& description,
                                                double initialValue = 0.0,
                                                std::uint64_t startPs = 0);
    Formula& addFormula(const std::string& name,
                        const std::string& unit,
                        const std::string& description,
                        Formula::Compute compute,
                        std::uint64_t startPs = 0);
    /// Adds a stat of a kind built elsewhere.
    template <typename StatType>
    StatType& add(std::unique_ptr<StatType> stat)
    {
        StatType& added = *stat;
        addStat(std::unique_ptr<Stat>(std::move(stat)));
        return added;
    }

    /// The run's wall-time profile (kernel/WallProfile.h), attached to the root before the
    /// models are built; a group finds its root's. nullptr without --profile.
    void attachWallProfile(WallProfile* profile) { wall = profile; }
    WallProfile* wallProfile() const;

    /// Resets every stat in this group and below: a new window starting at nowPs (ps).
    void reset(std::uint64_t nowPs);

    const std::vector<std::unique_ptr<Stat>>& stats() const { return ownStats; }
    const std::vector<std::unique_ptr<StatGroup>>& groups() const { return children; }

    /// The stat at a dotted path relative to this group ("hbm.channel3.reads"); nullptr if
    /// there is none.
    const Stat* findStat(std::string_view relativePath) const;
    /// The group at a dotted path relative to this group; nullptr if there is none.
    const StatGroup* findGroup(std::string_view relativePath) const;

private:
    void claimName(const std::string& name, const char* what);
    void addStat(std::unique_ptr<Stat> stat);

    std::string groupName;
    const StatGroup* parent = nullptr;
    WallProfile* wall = nullptr;
    // Every stat and child group by name, for lookups by path: a platform's root holds a
    // group per rank, and the report reads each rank's stats.
    struct Named {
        const Stat* stat = nullptr;
        const StatGroup* group = nullptr;
    };
    std::map<std::string, Named, std::less<>> names;
    std::vector<std::unique_ptr<Stat>> ownStats;
    std::vector<std::unique_ptr<StatGroup>> children;
};

/// The tree as nested JSON objects: {"<root>": {"<stat>": {"kind": ..., "value": ...,
/// "unit": ..., "description": ...}, "<child group>": {...}}}, keys in creation order.
/// Time-dependent stats report over their window up to nowPs (ps).
nlohmann::ordered_json statsToJson(const StatGroup& root, std::uint64_t nowPs);

/// statsToJson, written with two-space indentation and a final newline.
void writeStatsJson(std::ostream& out, const StatGroup& root, std::uint64_t nowPs);

/// One line per value, three aligned columns: full path, value and unit, description.
/// Distributions take one line per summary figure and per histogram bucket.
void writeStatsText(std::ostream& out, const StatGroup& root, std::uint64_t nowPs);

} // namespace etsim
