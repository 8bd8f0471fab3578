#pragma once
// Small helpers shared by the SVG pictures etsim writes (etsim plot, sweep, compare): text
// escaping, the document frame and the colours of the time breakdown, so every picture
// speaks the same visual language.

#include <array>
#include <iosfwd>
#include <string>

namespace etsim::apps {

/// One part of a rank's time breakdown as the run report names it (docs/report.md).
struct BreakdownPart {
    const char* key;
    const char* label;
    const char* colour;
};

/// compute, memory, exposed communication, idle: the four that sum to a rank's finish time.
inline constexpr std::array<BreakdownPart, 4> breakdownParts = {{
    {"compute_ns", "compute", "#4e79a7"},
    {"memory_ns", "memory", "#f28e2b"},
    {"exposed_comm_ns", "exposed communication", "#e15759"},
    {"idle_ns", "idle", "#bab0ac"},
}};

/// `text` with &, <, > and " escaped for SVG text and attributes.
std::string svgEscape(const std::string& text);

/// Opens an SVG document of `width` x `height` px on a white background (one decimal for
/// every number written afterwards).
void svgBegin(std::ostream& out, int width, int height);
/// Closes the document.
void svgEnd(std::ostream& out);
/// A text element; `anchor` is start, middle or end.
void svgText(std::ostream& out,
             double x,
             double y,
             const std::string& text,
             const char* anchor = "start",
             int fontSize = 12);
/// The legend of the breakdown colours in one row starting at (x, y).
void svgBreakdownLegend(std::ostream& out, int x, int y);

} // namespace etsim::apps
