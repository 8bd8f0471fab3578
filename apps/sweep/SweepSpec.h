#pragma once
// A design-space sweep described in YAML (docs/sweep.md): a base platform, a trace (or an
// `etsim gen` recipe generated once), fixed overrides, and parameters to vary:
//
//     name: hbm-x-tensor
//     platform: ng1                      # preset or file (relative to this file)
//     generate: [microbench, --ranks, 8, --collective, all_reduce, --size, 64 MiB]
//     set: [driver.mode=model]
//     parameters:
//       - {key: accelerator.hbm.channels, values: [16, 32]}
//       - key: fabric.topology.dims[0].bandwidth
//         range: {start: 100, stop: 400, step: 100, unit: GB/s}
//       - zip:
//           - {key: a.b, values: [1, 2]}
//           - {key: c.d, values: [x, y]}
//
// Entries of `parameters` combine as a cartesian product (the first varies slowest); the
// members of a `zip` vary together. Every value is an `etsim run --set key=value` text.

#include "kernel/Config.h"

#include <cstddef>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace etsim::sweep {

/// One varied key and the values it takes, as --set text.
struct Parameter {
    std::string key;
    std::vector<std::string> values;
    ConfigLocation location;
};

/// One factor of the product: a single parameter, or several zipped ones of equal length.
struct Axis {
    std::vector<Parameter> parameters;
    std::size_t size() const { return parameters.front().values.size(); }
};

/// Most points a sweep may expand to; a larger product is almost always a typo.
constexpr std::size_t maxSweepPoints = 100000;

/// A parsed sweep file. Paths are absolute (resolved against the spec's folder).
struct SweepSpec {
    std::string name;
    std::filesystem::path file;
    /// The spec's text as read, recorded in the results.
    std::string text;
    /// A platform file (absolute) or a bundled preset name.
    std::string platform;
    /// Trace prefix or folder; empty when `generate` is given.
    std::string trace;
    /// `etsim gen` arguments (without --out/--name) when the trace is generated.
    std::vector<std::string> generate;
    /// Run a one-rank trace as this many ranks (etsim run --replicate); 0 = off.
    std::uint32_t replicate = 0;
    /// Communicator-group file (absolute), or empty.
    std::string commGroups;
    /// Overrides every point gets, "key.path=value".
    std::vector<std::string> sets;
    /// Also run the base platform (fixed overrides only) for the speed-up column.
    bool runBase = true;
    std::vector<Axis> axes;
};

/// One design point: its number and its parameter values, in axis order.
struct DesignPoint {
    std::size_t index = 0;
    std::vector<std::pair<std::string, std::string>> parameters;
};

/// Reads and checks a sweep file; errors are ConfigErrors "file:line:column: key: problem".
SweepSpec loadSweepSpec(const std::filesystem::path& file);
/// The same for text; relative paths resolve against `folder`, errors name `fileName`.
SweepSpec parseSweepSpec(const std::string& text,
                         const std::string& fileName,
                         const std::filesystem::path& folder);

/// The cartesian product of the axes, first axis slowest; one empty point when there are none.
std::vector<DesignPoint> expandPoints(const SweepSpec& spec);

/// The distinct keys of the spec's parameters, in order (the table's parameter columns).
std::vector<std::string> parameterKeys(const SweepSpec& spec);

/// "1", "2.5", "1e+12": the shortest text that reads back as the same double.
std::string formatNumber(double value);

} // namespace etsim::sweep
