#include "apps/sweep/SweepSpec.h"

#include "kernel/InputFile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace etsim::sweep {

namespace {

namespace fs = std::filesystem;

enum class Scale { Linear, Log };
constexpr EnumName<Scale> scaleNames[] = {{"linear", Scale::Linear}, {"log", Scale::Log}};
constexpr Scale defaultScale = Scale::Linear;
// A range stops at `stop` even when rounding leaves the last step a hair beyond it.
constexpr double rangeSlack = 1e-9;

std::string withUnit(double value, const std::string& unit)
{
    // Steps land on 0.30000000000000004 and the like; 12 significant digits are plenty.
    char rounded[32];
    std::snprintf(rounded, sizeof rounded, "%.12g", value);
    value = std::strtod(rounded, nullptr);
    return unit.empty() ? formatNumber(value) : formatNumber(value) + " " + unit;
}

std::vector<std::string> parseRange(ConfigMap& map)
{
    const double start = map.required<double>("start", "first value, e.g. 100");
    const double stop = map.required<double>("stop", "last value (included), e.g. 400");
    const auto step = map.optional<double>("step");
    const auto count = map.optional<std::uint32_t>("count");
    const Scale scale = map.enumField("scale", scaleNames, defaultScale);
    const std::string unit = map.optional<std::string>("unit", "");
    if (step.has_value() == count.has_value())
        map.fail("step", "give exactly one of step (linear) and count (points from start to stop)");
    std::vector<std::string> values;
    if (step) {
        if (scale == Scale::Log)
            map.fail("scale", "log ranges take count, not step");
        if (*step == 0.0 || (stop - start) / *step < 0.0)
            map.fail("step", "must be non-zero and lead from start to stop");
        const double span = (stop - start) / *step;
        const double points = std::floor(span + rangeSlack) + 1.0;
        if (points > static_cast<double>(maxSweepPoints))
            map.fail("step", "gives more than " + std::to_string(maxSweepPoints) + " values");
        for (double i = 0; i < points; ++i)
            values.push_back(withUnit(start + i * *step, unit));
        return values;
    }
    if (*count < 1 || *count > maxSweepPoints)
        map.fail("count", "must be from 1 to " + std::to_string(maxSweepPoints));
    if (scale == Scale::Log && (start <= 0.0 || stop <= 0.0))
        map.fail("start", "a log range needs start and stop above 0");
    for (std::uint32_t i = 0; i < *count; ++i) {
        const double t = *count == 1 ? 0.0 : static_cast<double>(i) / (*count - 1);
        double value =
            scale == Scale::Log ? start * std::pow(stop / start, t) : start + t * (stop - start);
        values.push_back(withUnit(value, unit));
    }
    return values;
}

Parameter parseParameter(ConfigMap& map)
{
    Parameter parameter;
    const auto key = map.required<Located<std::string>>(
        "key", "the --set key path, e.g. fabric.topology.dims[0].bandwidth");
    parameter.key = key.value;
    parameter.location = key.location;
    if (parameter.key.empty() || parameter.key.find('=') != std::string::npos)
        key.location.fail("must be a key path such as accelerator.hbm.channels (no '=')");
    const bool hasValues = map.has("values");
    const bool hasRange = map.has("range");
    if (hasValues == hasRange)
        map.fail("values", "give exactly one of values (a list) and range");
    if (hasValues)
        parameter.values = map.required<std::vector<std::string>>("values");
    else
        parameter.values = map.nested("range", parseRange);
    if (parameter.values.empty())
        map.fail("values", "must hold at least one value");
    return parameter;
}

Axis parseAxis(ConfigMap& map)
{
    Axis axis;
    if (!map.has("zip")) {
        axis.parameters.push_back(parseParameter(map));
        return axis;
    }
    axis.parameters = map.sequence("zip", parseParameter);
    if (axis.parameters.empty())
        map.fail("zip", "must list at least one parameter");
    for (const Parameter& parameter : axis.parameters)
        if (parameter.values.size() != axis.parameters.front().values.size())
            parameter.location.fail("a zipped parameter must have as many values as the first (" +
                                    std::to_string(axis.parameters.front().values.size()) +
                                    "), has " + std::to_string(parameter.values.size()));
    return axis;
}

std::string resolvePath(const fs::path& folder, const std::string& path)
{
    if (path.empty())
        return path;
    fs::path p(path);
    return (p.is_absolute() ? p : folder / p).lexically_normal().string();
}

} // namespace

std::string formatNumber(double value)
{
    char text[32];
    // Whole numbers as such: "100", not "1e+02".
    if (std::abs(value) < 1e15 && value == std::floor(value)) {
        std::snprintf(text, sizeof text, "%.0f", value);
        return text;
    }
    for (int digits = 1; digits <= 17; ++digits) {
        std::snprintf(text, sizeof text, "%.*g", digits, value);
        if (std::strtod(text, nullptr) == value)
            break;
    }
    return text;
}

SweepSpec
parseSweepSpec(const std::string& text, const std::string& fileName, const fs::path& folder)
{
    SweepSpec spec = loadConfigString(text, fileName).map([&](ConfigMap& map) {
        SweepSpec s;
        s.name = map.optional<std::string>("name", "sweep");
        const auto platform = map.required<Located<std::string>>(
            "platform", "a platform file or a bundled preset name, e.g. hgx_h100");
        // A name that is a file next to the spec is that file; otherwise a preset.
        const std::string asFile = resolvePath(folder, platform.value);
        std::error_code ignored;
        s.platform = fs::exists(asFile, ignored) ? asFile : platform.value;
        const bool hasTrace = map.has("trace");
        const bool hasGenerate = map.has("generate");
        if (hasTrace == hasGenerate)
            map.fail("trace",
                     "give exactly one of trace (a prefix or folder) and generate "
                     "(etsim gen arguments)");
        if (hasTrace)
            s.trace = resolvePath(folder, map.required<std::string>("trace"));
        else
            s.generate = map.required<std::vector<std::string>>("generate");
        if (hasGenerate && s.generate.empty())
            map.fail("generate",
                     "must hold the etsim gen arguments, e.g. [microbench, --ranks, 8]");
        for (const std::string& argument : s.generate)
            if (argument == "--out" || argument == "--name")
                map.fail("generate", "must not give " + argument + ": the sweep chooses it");
        s.replicate = map.optional<std::uint32_t>("replicate", 0);
        s.commGroups = resolvePath(folder, map.optional<std::string>("comm_groups", ""));
        if (auto sets = map.value("set")) {
            for (const ConfigNode& element : sets->elements()) {
                std::string entry = element.as<std::string>();
                if (entry.find('=') == std::string::npos || entry.front() == '=')
                    element.fail("expected key.path=value, got \"" + entry + "\"");
                s.sets.push_back(entry);
            }
        }
        s.runBase = map.optional<bool>("base", true);
        if (map.has("parameters"))
            s.axes = map.sequence("parameters", parseAxis);
        std::size_t points = 1;
        for (const Axis& axis : s.axes) {
            points *= axis.size();
            if (points > maxSweepPoints)
                map.fail("parameters",
                         "expand to more than " + std::to_string(maxSweepPoints) + " points");
        }
        return s;
    });
    spec.file = fileName;
    spec.text = text;
    return spec;
}

SweepSpec loadSweepSpec(const fs::path& file)
{
    const std::string text = readTextFile(file, "a sweep spec YAML file");
    const fs::path absolute = fs::absolute(file);
    return parseSweepSpec(text, file.string(), absolute.parent_path());
}

std::vector<DesignPoint> expandPoints(const SweepSpec& spec)
{
    std::size_t total = 1;
    for (const Axis& axis : spec.axes)
        total *= axis.size();
    std::vector<DesignPoint> points;
    points.reserve(total);
    for (std::size_t index = 0; index < total; ++index) {
        DesignPoint point;
        point.index = index;
        // Mixed-radix digits of the index, the last axis fastest.
        std::vector<std::size_t> digits(spec.axes.size());
        std::size_t rest = index;
        for (std::size_t a = spec.axes.size(); a-- > 0;) {
            digits[a] = rest % spec.axes[a].size();
            rest /= spec.axes[a].size();
        }
        for (std::size_t a = 0; a < spec.axes.size(); ++a)
            for (const Parameter& parameter : spec.axes[a].parameters)
                point.parameters.emplace_back(parameter.key, parameter.values[digits[a]]);
        points.push_back(std::move(point));
    }
    return points;
}

std::vector<std::string> parameterKeys(const SweepSpec& spec)
{
    std::vector<std::string> keys;
    for (const Axis& axis : spec.axes)
        for (const Parameter& parameter : axis.parameters)
            if (std::find(keys.begin(), keys.end(), parameter.key) == keys.end())
                keys.push_back(parameter.key);
    return keys;
}

} // namespace etsim::sweep
