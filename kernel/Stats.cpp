#include "kernel/Stats.h"

#include "kernel/Error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <ostream>
#include <sstream>
#include <utility>

namespace etsim {

namespace {

std::string joinPath(const std::string& parent, const std::string& name)
{
    return parent.empty() ? name : parent + "." + name;
}

// Dots would make paths ambiguous; whitespace and control characters break the text
// columns and any tool that splits on them.
void checkName(const std::string& name, const std::string& where)
{
    bool bad = name.empty();
    for (char c : name)
        if (c == '.' || static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
            bad = true;
    if (bad)
        throw Error("stat name \"" + name + "\" in " + where +
                    ": names must be non-empty and contain no dots, spaces or control "
                    "characters (nest a child group instead of \"a.b\")");
}

void checkBounds(const std::vector<double>& bounds, const std::string& where)
{
    for (std::size_t i = 0; i < bounds.size(); ++i) {
        if (!std::isfinite(bounds[i]))
            throw Error(where + ": histogram bound " + std::to_string(i) +
                        " is not finite; give finite bounds (the outer buckets are open)");
        if (i > 0 && !(bounds[i - 1] < bounds[i]))
            throw Error(where + ": histogram bounds must be strictly increasing, but bound " +
                        std::to_string(i) + " (" + std::to_string(bounds[i]) +
                        ") does not exceed bound " + std::to_string(i - 1) + " (" +
                        std::to_string(bounds[i - 1]) + ")");
    }
}

std::string formatNumber(double value)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value);
    return text;
}

std::string withUnit(const std::string& number, const std::string& unit)
{
    return unit.empty() ? number : number + " " + unit;
}

// Column widths count code points, not bytes, so "µs" lines up with "ns".
std::size_t displayWidth(const std::string& text)
{
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
    }));
}

class JsonWriter final : public StatVisitor {
public:
    explicit JsonWriter(std::uint64_t nowPs) : nowPs(nowPs) {}

    nlohmann::ordered_json group(const StatGroup& group)
    {
        nlohmann::ordered_json object = nlohmann::ordered_json::object();
        for (const auto& stat : group.stats()) {
            current = nlohmann::ordered_json::object();
            current["kind"] = stat->kind();
            stat->accept(*this);
            current["unit"] = stat->unit();
            current["description"] = stat->description();
            object[stat->name()] = std::move(current);
        }
        for (const auto& child : group.groups())
            object[child->name()] = this->group(*child);
        return object;
    }

    void visit(const Counter& stat) override { current["value"] = stat.value(); }
    void visit(const Scalar& stat) override { current["value"] = stat.value(); }
    void visit(const Distribution& stat) override
    {
        current["count"] = stat.count();
        current["sum"] = stat.sum();
        bool empty = stat.count() == 0;
        current["min"] = empty ? nlohmann::ordered_json() : nlohmann::ordered_json(stat.min());
        current["max"] = empty ? nlohmann::ordered_json() : nlohmann::ordered_json(stat.max());
        current["mean"] = empty ? nlohmann::ordered_json() : nlohmann::ordered_json(stat.mean());
        current["stddev"] =
            empty ? nlohmann::ordered_json() : nlohmann::ordered_json(stat.stddev());
        current["histogram"] = {{"bounds", stat.bounds()}, {"counts", stat.bucketCounts()}};
    }
    void visit(const TimeWeightedAverage& stat) override
    {
        current["value"] = stat.average(nowPs);
        current["current"] = stat.value();
        current["window_start_ps"] = stat.windowStartPs();
        current["window_end_ps"] = nowPs;
    }
    void visit(const Formula& stat) override { current["value"] = stat.value(nowPs); }

private:
    std::uint64_t nowPs;
    nlohmann::ordered_json current;
};

struct TextRow {
    std::string path;
    std::string value;
    std::string description;
};

class TextWriter final : public StatVisitor {
public:
    explicit TextWriter(std::uint64_t nowPs) : nowPs(nowPs) {}

    void group(const StatGroup& group, const std::string& groupPath)
    {
        for (const auto& stat : group.stats()) {
            path = joinPath(groupPath, stat->name());
            stat->accept(*this);
        }
        for (const auto& child : group.groups())
            this->group(*child, joinPath(groupPath, child->name()));
    }

    void visit(const Counter& stat) override
    {
        add(path, withUnit(std::to_string(stat.value()), stat.unit()), stat.description());
    }
    void visit(const Scalar& stat) override
    {
        add(path, withUnit(formatNumber(stat.value()), stat.unit()), stat.description());
    }
    void visit(const Distribution& stat) override
    {
        const std::string& unit = stat.unit();
        const std::string& description = stat.description();
        bool empty = stat.count() == 0;
        auto figure = [&](double value) {
            return empty ? std::string("-") : withUnit(formatNumber(value), unit);
        };
        add(path + ".count", std::to_string(stat.count()), description + " (samples)");
        add(path + ".sum", withUnit(formatNumber(stat.sum()), unit), description + " (sum)");
        add(path + ".min", figure(stat.min()), description + " (min)");
        add(path + ".max", figure(stat.max()), description + " (max)");
        add(path + ".mean", figure(stat.mean()), description + " (mean)");
        add(path + ".stddev", figure(stat.stddev()), description + " (stddev)");
        const auto& bounds = stat.bounds();
        const auto& counts = stat.bucketCounts();
        for (std::size_t i = 0; i < counts.size(); ++i) {
            std::string range;
            if (bounds.empty())
                range = "[all]";
            else if (i == 0)
                range = "[<" + formatNumber(bounds.front()) + "]";
            else if (i == bounds.size())
                range = "[>=" + formatNumber(bounds.back()) + "]";
            else
                range = "[" + formatNumber(bounds[i - 1]) + "," + formatNumber(bounds[i]) + ")";
            add(path + ".bucket" + range, std::to_string(counts[i]), description + " (histogram)");
        }
    }
    void visit(const TimeWeightedAverage& stat) override
    {
        add(path, withUnit(formatNumber(stat.average(nowPs)), stat.unit()), stat.description());
    }
    void visit(const Formula& stat) override
    {
        add(path, withUnit(formatNumber(stat.value(nowPs)), stat.unit()), stat.description());
    }

    void print(std::ostream& out) const
    {
        std::size_t pathWidth = 0;
        std::size_t valueWidth = 0;
        for (const auto& row : rows) {
            pathWidth = std::max(pathWidth, displayWidth(row.path));
            valueWidth = std::max(valueWidth, displayWidth(row.value));
        }
        for (const auto& row : rows) {
            std::string line = row.path;
            line.append(pathWidth - displayWidth(row.path) + 2, ' ');
            line += row.value;
            if (!row.description.empty()) {
                line.append(valueWidth - displayWidth(row.value) + 2, ' ');
                line += row.description;
            }
            out << line << '\n';
        }
    }

private:
    void add(std::string rowPath, std::string value, std::string description)
    {
        rows.push_back({std::move(rowPath), std::move(value), std::move(description)});
    }

    std::uint64_t nowPs;
    std::string path;
    std::vector<TextRow> rows;
};

} // namespace

Stat::Stat(std::string name, std::string unit, std::string description)
    : statName(std::move(name)), statUnit(std::move(unit)), statDescription(std::move(description))
{
}

Distribution::Distribution(std::string name,
                           std::string unit,
                           std::string description,
                           std::vector<double> bucketBounds,
                           double quantum)
    : Stat(std::move(name), std::move(unit), std::move(description))
    , bucketBounds(std::move(bucketBounds))
    , buckets(this->bucketBounds.size() + 1, 0)
    , quantum(quantum)
{
    checkBounds(this->bucketBounds, "distribution \"" + this->name() + "\"");
    if (!std::isfinite(quantum) || quantum < 0.0)
        throw Error("distribution \"" + this->name() +
                    "\": the quantum must be a finite number >= 0, not " + std::to_string(quantum));
}

std::size_t Distribution::bucketOf(double value)
{
    // Samples come in runs of one size (a stream's chunks): try the last bucket first.
    std::size_t bucket = lastBucket;
    const bool fits = (bucket == 0 || bucketBounds[bucket - 1] <= value) &&
                      (bucket == bucketBounds.size() || value < bucketBounds[bucket]);
    if (!fits) {
        bucket = static_cast<std::size_t>(
            std::upper_bound(bucketBounds.begin(), bucketBounds.end(), value) -
            bucketBounds.begin());
        lastBucket = bucket;
    }
    return bucket;
}

void Distribution::sampleQuanta(std::uint64_t quanta, std::uint64_t times)
{
    if (quantum == 0.0)
        throw Error("distribution \"" + name() +
                    "\": internal: sampleQuanta on a distribution of real numbers");
    if (times == 0)
        return;
    buckets[bucketOf(static_cast<double>(quanta) * quantum)] += times;
    fewestQuanta = samples == 0 ? quanta : std::min(fewestQuanta, quanta);
    mostQuanta = samples == 0 ? quanta : std::max(mostQuanta, quanta);
    samples += times;
    quantaSum += static_cast<Wide>(quanta) * times;
    quantaSquares += static_cast<Wide>(quanta) * quanta * times;
}

void Distribution::sample(double value)
{
    if (std::isnan(value))
        throw Error("distribution \"" + name() + "\": sample is NaN; check the value computed");
    if (quantum != 0.0)
        throw Error("distribution \"" + name() +
                    "\": internal: a real sample on a distribution of quanta");
    ++buckets[bucketOf(value)];
    ++samples;
    total += value;
    lowest = std::min(lowest, value);
    highest = std::max(highest, value);
    double delta = value - runningMean;
    runningMean += delta / static_cast<double>(samples);
    squaredDeviations += delta * (value - runningMean);
}

double Distribution::sum() const
{
    return quantum == 0.0 ? total : static_cast<double>(quantaSum) * quantum;
}

double Distribution::min() const
{
    if (samples == 0)
        return 0.0;
    return quantum == 0.0 ? lowest : static_cast<double>(fewestQuanta) * quantum;
}

double Distribution::max() const
{
    if (samples == 0)
        return 0.0;
    return quantum == 0.0 ? highest : static_cast<double>(mostQuanta) * quantum;
}

double Distribution::mean() const
{
    if (quantum == 0.0)
        return runningMean;
    if (samples == 0)
        return 0.0;
    return static_cast<double>(quantaSum) / static_cast<double>(samples) * quantum;
}

double Distribution::stddev() const
{
    if (samples < 2)
        return 0.0;
    if (quantum == 0.0)
        return std::sqrt(squaredDeviations / static_cast<double>(samples));
    // n·Σx² - (Σx)² is exact in integers while both fit 128 bits; past that, the variance is
    // taken in long double.
    const auto n = static_cast<long double>(samples);
    const long double mean = static_cast<long double>(quantaSum) / n;
    long double variance = static_cast<long double>(quantaSquares) / n - mean * mean;
    const Wide limit = ~Wide{0} / samples;
    if (quantaSquares <= limit && quantaSum <= std::numeric_limits<std::uint64_t>::max()) {
        const Wide scaled = quantaSquares * samples;
        const Wide squaredSum = quantaSum * quantaSum;
        variance =
            scaled >= squaredSum ? static_cast<long double>(scaled - squaredSum) / (n * n) : 0.0L;
    }
    return std::sqrt(static_cast<double>(std::max(variance, 0.0L))) * quantum;
}

void Distribution::reset(std::uint64_t /*nowPs*/)
{
    std::fill(buckets.begin(), buckets.end(), 0);
    samples = 0;
    total = 0.0;
    lowest = std::numeric_limits<double>::infinity();
    highest = -std::numeric_limits<double>::infinity();
    runningMean = 0.0;
    squaredDeviations = 0.0;
    quantaSum = 0;
    quantaSquares = 0;
    fewestQuanta = 0;
    mostQuanta = 0;
}

TimeWeightedAverage::TimeWeightedAverage(std::string name,
                                         std::string unit,
                                         std::string description,
                                         double initialValue,
                                         std::uint64_t startPs)
    : Stat(std::move(name), std::move(unit), std::move(description))
    , current(initialValue)
    , startPs(startPs)
    , lastChangePs(startPs)
{
}

double TimeWeightedAverage::average(std::uint64_t nowPs) const
{
    if (nowPs < lastChangePs)
        throwTimeWentBack(nowPs);
    if (nowPs == startPs)
        return current;
    double held = area + current * static_cast<double>(nowPs - lastChangePs);
    return held / static_cast<double>(nowPs - startPs);
}

void TimeWeightedAverage::reset(std::uint64_t nowPs)
{
    if (nowPs < lastChangePs)
        throwTimeWentBack(nowPs);
    startPs = nowPs;
    lastChangePs = nowPs;
    area = 0.0;
}

void TimeWeightedAverage::throwTimeWentBack(std::uint64_t timePs) const
{
    throw Error("time-weighted average \"" + name() + "\": time " + std::to_string(timePs) +
                " ps is before the last change at " + std::to_string(lastChangePs) +
                " ps; pass the current simulated time, which never decreases");
}

Formula::Formula(std::string name,
                 std::string unit,
                 std::string description,
                 Compute compute,
                 std::uint64_t startPs)
    : Stat(std::move(name), std::move(unit), std::move(description))
    , compute(std::move(compute))
    , startPs(startPs)
{
    if (!this->compute)
        throw Error("formula \"" + this->name() +
                    "\": no callback given; pass a function "
                    "that computes the value");
}

double Formula::value(std::uint64_t nowPs) const
{
    return compute(StatWindow{startPs, std::max(startPs, nowPs)});
}

StatGroup::StatGroup(std::string name) : groupName(std::move(name))
{
    checkName(groupName, "the root of the stats tree");
}

std::string StatGroup::path() const
{
    return parent == nullptr ? groupName : joinPath(parent->path(), groupName);
}

WallProfile* StatGroup::wallProfile() const
{
    for (const StatGroup* group = this; group != nullptr; group = group->parent)
        if (group->wall != nullptr)
            return group->wall;
    return nullptr;
}

void StatGroup::claimName(const std::string& name, const char* what)
{
    checkName(name, "group " + path());
    if (auto found = names.find(name); found != names.end()) {
        const std::string existing = found->second.stat != nullptr
                                         ? std::string("a ") + found->second.stat->kind()
                                         : std::string("a child group");
        throw Error(joinPath(path(), name) + ": cannot add " + what + ", the name is already " +
                    "used by " + existing + " in this group; give each stat and child group a " +
                    "distinct name");
    }
    names.emplace(name, Named{});
}

StatGroup& StatGroup::addGroup(const std::string& name)
{
    checkName(name, "group " + path());
    return adoptGroup(std::make_unique<StatGroup>(name));
}

StatGroup& StatGroup::adoptGroup(std::unique_ptr<StatGroup> group)
{
    if (!group)
        throw Error("group " + path() + ": adoptGroup was given no group");
    claimName(group->name(), "a group");
    group->parent = this;
    names[group->name()].group = group.get();
    children.push_back(std::move(group));
    return *children.back();
}

void StatGroup::addStat(std::unique_ptr<Stat> stat)
{
    if (!stat)
        throw Error("group " + path() + ": add was given no stat");
    claimName(stat->name(), (std::string("a ") + stat->kind()).c_str());
    names[stat->name()].stat = stat.get();
    ownStats.push_back(std::move(stat));
}

Counter& StatGroup::addCounter(const std::string& name,
                               const std::string& unit,
                               const std::string& description)
{
    return add(std::make_unique<Counter>(name, unit, description));
}

Scalar& StatGroup::addScalar(const std::string& name,
                             const std::string& unit,
                             const std::string& description)
{
    return add(std::make_unique<Scalar>(name, unit, description));
}

Distribution& StatGroup::addDistribution(const std::string& name,
                                         const std::string& unit,
                                         const std::string& description,
                                         std::vector<double> bucketBounds,
                                         double quantum)
{
    // Checked here first so the message names the full path, not just the stat.
    checkName(name, "group " + path());
    checkBounds(bucketBounds, joinPath(path(), name));
    return add(
        std::make_unique<Distribution>(name, unit, description, std::move(bucketBounds), quantum));
}

TimeWeightedAverage& StatGroup::addTimeWeightedAverage(const std::string& name,
                                                       const std::string& unit,
                                                       const std::string& description,
                                                       double initialValue,
                                                       std::uint64_t startPs)
{
    return add(
        std::make_unique<TimeWeightedAverage>(name, unit, description, initialValue, startPs));
}

Formula& StatGroup::addFormula(const std::string& name,
                               const std::string& unit,
                               const std::string& description,
                               Formula::Compute compute,
                               std::uint64_t startPs)
{
    if (!compute)
        throw Error(joinPath(path(), name) + ": formula has no callback; pass a function "
                                             "that computes the value");
    return add(std::make_unique<Formula>(name, unit, description, std::move(compute), startPs));
}

void StatGroup::reset(std::uint64_t nowPs)
{
    for (auto& stat : ownStats)
        stat->reset(nowPs);
    for (auto& child : children)
        child->reset(nowPs);
}

const StatGroup* StatGroup::findGroup(std::string_view relativePath) const
{
    const StatGroup* group = this;
    while (!relativePath.empty() && group != nullptr) {
        auto dot = relativePath.find('.');
        std::string_view part = relativePath.substr(0, dot);
        relativePath =
            dot == std::string_view::npos ? std::string_view{} : relativePath.substr(dot + 1);
        auto found = group->names.find(part);
        group = found == group->names.end() ? nullptr : found->second.group;
    }
    return group;
}

const Stat* StatGroup::findStat(std::string_view relativePath) const
{
    auto dot = relativePath.rfind('.');
    const StatGroup* group =
        dot == std::string_view::npos ? this : findGroup(relativePath.substr(0, dot));
    std::string_view name =
        dot == std::string_view::npos ? relativePath : relativePath.substr(dot + 1);
    if (group == nullptr)
        return nullptr;
    auto found = group->names.find(name);
    return found == group->names.end() ? nullptr : found->second.stat;
}

nlohmann::ordered_json statsToJson(const StatGroup& root, std::uint64_t nowPs)
{
    JsonWriter writer(nowPs);
    nlohmann::ordered_json document = nlohmann::ordered_json::object();
    document[root.name()] = writer.group(root);
    return document;
}

void writeStatsJson(std::ostream& out, const StatGroup& root, std::uint64_t nowPs)
{
    out << statsToJson(root, nowPs).dump(2) << '\n';
}

void writeStatsText(std::ostream& out, const StatGroup& root, std::uint64_t nowPs)
{
    TextWriter writer(nowPs);
    writer.group(root, root.name());
    writer.print(out);
}

} // namespace etsim
