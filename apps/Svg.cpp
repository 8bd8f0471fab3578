#include "apps/Svg.h"

#include <iomanip>
#include <ostream>

namespace etsim::apps {

std::string svgEscape(const std::string& text)
{
    std::string out;
    for (char c : text) {
        switch (c) {
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '&':
            out += "&amp;";
            break;
        case '"':
            out += "&quot;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

void svgBegin(std::ostream& out, int width, int height)
{
    out << std::fixed << std::setprecision(1);
    out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
        << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
}

void svgEnd(std::ostream& out)
{
    out << "</svg>\n";
}

void svgText(std::ostream& out,
             double x,
             double y,
             const std::string& text,
             const char* anchor,
             int fontSize)
{
    out << "<text x=\"" << x << "\" y=\"" << y << "\"";
    if (std::string(anchor) != "start")
        out << " text-anchor=\"" << anchor << "\"";
    if (fontSize != 12)
        out << " font-size=\"" << fontSize << "\"";
    out << ">" << svgEscape(text) << "</text>\n";
}

void svgBreakdownLegend(std::ostream& out, int x, int y)
{
    for (const BreakdownPart& part : breakdownParts) {
        out << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"12\" height=\"12\" fill=\""
            << part.colour << "\"/><text x=\"" << x + 16 << "\" y=\"" << y + 11 << "\">"
            << part.label << "</text>\n";
        x += 40 + static_cast<int>(std::string(part.label).size()) * 7;
    }
}

} // namespace etsim::apps
