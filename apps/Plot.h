#pragma once
// `etsim plot`: a run report drawn as one SVG picture: per rank a stacked bar of compute,
// memory, exposed communication and idle time, and a bar per utilisation figure.

#include <nlohmann/json.hpp>

#include <iosfwd>

namespace etsim::apps {

/// Writes the picture of a report (docs/report.md, schema_version 1). Throws
/// nlohmann::json::exception or etsim::Error for a report without the documented fields.
void writeReportSvg(std::ostream& out, const nlohmann::json& report);

} // namespace etsim::apps
