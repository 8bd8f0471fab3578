#include "apps/Plot.h"

#include "apps/Svg.h"
#include "kernel/Error.h"

#include <algorithm>
#include <array>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace etsim::apps {

void writeReportSvg(std::ostream& out, const nlohmann::json& report)
{
    if (!report.contains("schema_version") || report.at("schema_version").get<int>() != 1)
        throw Error("not an etsim run report of schema_version 1");
    const auto& ranks = report.at("ranks");
    const double total = report.at("simulated_time_ns").get<double>();
    // At most 64 bars: larger runs show the first 64 ranks.
    const std::size_t shown = std::min<std::size_t>(ranks.size(), 64);
    const int barHeight = shown > 32 ? 8 : 16;
    const int left = 70;
    const int width = 900;
    const int plotWidth = width - left - 30;
    const int top = 60;
    const int breakdownHeight = static_cast<int>(shown) * (barHeight + 4);

    struct Figure {
        std::string label;
        double value;
    };
    std::vector<Figure> figures;
    const auto& resources = report.at("resources");
    figures.push_back({"tensor units busy", resources.at("tensor_busy").get<double>()});
    figures.push_back({"FLOP utilisation", resources.at("flop_utilisation").get<double>()});
    figures.push_back({"HBM bandwidth", resources.at("hbm_utilisation").get<double>()});
    for (const auto& link : resources.at("busiest_links"))
        figures.push_back(
            {"link " + link.at("name").get<std::string>(), link.at("utilisation").get<double>()});
    const int utilTop = top + breakdownHeight + 80;
    const int height = utilTop + static_cast<int>(figures.size()) * 22 + 30;

    svgBegin(out, width, height);
    std::string title = "etsim run";
    if (report.contains("platform") && report.at("platform").contains("name"))
        title += ": " + report.at("platform").at("name").get<std::string>();
    out << "<text x=\"" << left << "\" y=\"22\" font-size=\"16\">" << svgEscape(title) << ", "
        << ranks.size() << " ranks, " << total / 1e6 << " ms simulated</text>\n";
    svgBreakdownLegend(out, left, 34);
    for (std::size_t i = 0; i < shown; ++i) {
        const auto& rank = ranks.at(i);
        const int y = top + static_cast<int>(i) * (barHeight + 4);
        out << "<text x=\"" << left - 6 << "\" y=\"" << y + barHeight - 2
            << "\" text-anchor=\"end\">rank " << rank.at("rank").get<int>() << "</text>\n";
        double x = left;
        for (const BreakdownPart& part : breakdownParts) {
            const double ns = rank.at(part.key).get<double>();
            const double w = total > 0 ? plotWidth * ns / total : 0.0;
            if (w > 0)
                out << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\""
                    << barHeight << "\" fill=\"" << part.colour << "\"><title>rank "
                    << rank.at("rank").get<int>() << " " << part.label << ": " << ns / 1e3
                    << " us</title></rect>\n";
            x += w;
        }
    }
    out << "<text x=\"" << left << "\" y=\"" << top + breakdownHeight + 16
        << "\">0</text><text x=\"" << left + plotWidth << "\" y=\"" << top + breakdownHeight + 16
        << "\" text-anchor=\"end\">" << total / 1e3 << " us</text>\n";
    if (shown < ranks.size())
        out << "<text x=\"" << left + plotWidth / 2 << "\" y=\"" << top + breakdownHeight + 16
            << "\" text-anchor=\"middle\">first " << shown << " of " << ranks.size()
            << " ranks</text>\n";

    out << "<text x=\"" << left << "\" y=\"" << utilTop - 14
        << "\" font-size=\"14\">utilisation</text>\n";
    const int labelWidth = 220;
    for (std::size_t i = 0; i < figures.size(); ++i) {
        const int y = utilTop + static_cast<int>(i) * 22;
        const double value = std::clamp(figures[i].value, 0.0, 1.0);
        const int barWidth = plotWidth - labelWidth - 60;
        out << "<text x=\"" << left << "\" y=\"" << y + 12 << "\">" << svgEscape(figures[i].label)
            << "</text>\n";
        out << "<rect x=\"" << left + labelWidth << "\" y=\"" << y << "\" width=\"" << barWidth
            << "\" height=\"14\" fill=\"#eeeeee\"/>\n";
        out << "<rect x=\"" << left + labelWidth << "\" y=\"" << y << "\" width=\""
            << barWidth * value << "\" height=\"14\" fill=\"#59a14f\"/>\n";
        out << "<text x=\"" << left + labelWidth + barWidth + 6 << "\" y=\"" << y + 12 << "\">"
            << 100.0 * figures[i].value << " %</text>\n";
    }
    svgEnd(out);
}

} // namespace etsim::apps
