#include "apps/sweep/Results.h"

#include "apps/Svg.h"
#include "apps/sweep/SweepSpec.h"
#include "kernel/Error.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

namespace etsim::sweep {

namespace {

using apps::breakdownParts;
using apps::svgBegin;
using apps::svgBreakdownLegend;
using apps::svgEnd;
using apps::svgEscape;
using apps::svgText;

const nlohmann::json& field(const nlohmann::json& object,
                            const char* key,
                            const std::string& source,
                            const std::string& where)
{
    if (!object.is_object() || !object.contains(key))
        throw Error(source + ": " + where + key +
                    ": missing; expected an etsim run report (docs/report.md, schema_version 1)");
    return object.at(key);
}

double number(const nlohmann::json& object,
              const char* key,
              const std::string& source,
              const std::string& where = "")
{
    const nlohmann::json& value = field(object, key, source, where);
    if (!value.is_number())
        throw Error(source + ": " + where + key + ": expected a number");
    return value.get<double>();
}

std::string csvQuote(const std::string& text)
{
    if (text.find_first_of(",\"\n") == std::string::npos)
        return text;
    std::string out = "\"";
    for (char c : text)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string parameterValue(const Row& row, const std::string& key)
{
    for (const auto& [name, value] : row.parameters)
        if (name == key)
            return value;
    return "";
}

std::string fixed(double value, int digits)
{
    std::ostringstream text;
    text << std::fixed << std::setprecision(digits) << value;
    return text.str();
}

// The time in the unit that keeps it readable.
std::string readableTime(double ns)
{
    if (ns >= 1e9)
        return fixed(ns / 1e9, 3) + " s";
    if (ns >= 1e6)
        return fixed(ns / 1e6, 3) + " ms";
    if (ns >= 1e3)
        return fixed(ns / 1e3, 3) + " us";
    return fixed(ns, 1) + " ns";
}

// The leading number of a value such as "400 GB/s"; nullopt when there is none.
std::optional<double> leadingNumber(const std::string& text)
{
    const char* begin = text.c_str();
    char* end = nullptr;
    const double value = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(value))
        return std::nullopt;
    return value;
}

std::vector<const Row*> allRows(const Table& table)
{
    std::vector<const Row*> rows;
    if (table.base)
        rows.push_back(&*table.base);
    for (const Row& row : table.rows)
        rows.push_back(&row);
    return rows;
}

} // namespace

RunFigures figuresFromReport(const nlohmann::json& report, const std::string& source)
{
    if (!report.is_object() || !report.contains("schema_version") ||
        !report.at("schema_version").is_number_integer() ||
        report.at("schema_version").get<int>() != 1)
        throw Error(source + ": not an etsim run report of schema_version 1 (docs/report.md)");
    RunFigures figures;
    figures.outcome = field(report, "outcome", source, "").get<std::string>();
    if (report.contains("platform") && report.at("platform").contains("name"))
        figures.platform = report.at("platform").at("name").get<std::string>();
    figures.simulatedNs = number(report, "simulated_time_ns", source);
    figures.wallSeconds = number(report, "wall_seconds", source);
    const nlohmann::json& ranks = field(report, "ranks", source, "");
    figures.ranks = static_cast<std::uint32_t>(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const std::string where = "ranks[" + std::to_string(i) + "].";
        figures.computeNs += number(ranks[i], "compute_ns", source, where);
        figures.memoryNs += number(ranks[i], "memory_ns", source, where);
        figures.exposedCommNs += number(ranks[i], "exposed_comm_ns", source, where);
        figures.idleNs += number(ranks[i], "idle_ns", source, where);
    }
    if (figures.ranks > 0) {
        figures.computeNs /= figures.ranks;
        figures.memoryNs /= figures.ranks;
        figures.exposedCommNs /= figures.ranks;
        figures.idleNs /= figures.ranks;
    }
    const nlohmann::json& resources = field(report, "resources", source, "");
    figures.tensorBusy = number(resources, "tensor_busy", source, "resources.");
    figures.flopUtilisation = number(resources, "flop_utilisation", source, "resources.");
    figures.hbmUtilisation = number(resources, "hbm_utilisation", source, "resources.");
    if (resources.contains("busiest_links") && !resources.at("busiest_links").empty())
        figures.busiestLink =
            number(resources.at("busiest_links").at(0), "utilisation", source, "busiest_links[0].");
    if (report.contains("trace_files"))
        for (const auto& file : report.at("trace_files"))
            figures.traceFiles.push_back(file.value("path", "") + " " + file.value("crc32", ""));
    return figures;
}

std::optional<double> speedup(const Table& table, const Row& row)
{
    if (!table.base || !table.base->figures || !row.figures || row.figures->simulatedNs <= 0.0)
        return std::nullopt;
    return table.base->figures->simulatedNs / row.figures->simulatedNs;
}

std::vector<const Row*> rankRows(const Table& table)
{
    std::vector<const Row*> ranked;
    std::vector<const Row*> rest;
    for (const Row& row : table.rows)
        (row.figures ? ranked : rest).push_back(&row);
    std::stable_sort(ranked.begin(), ranked.end(), [](const Row* a, const Row* b) {
        return a->figures->simulatedNs < b->figures->simulatedNs;
    });
    ranked.insert(ranked.end(), rest.begin(), rest.end());
    return ranked;
}

void writeCsv(std::ostream& out, const Table& table)
{
    out << "id";
    for (const std::string& key : table.parameterKeys)
        out << "," << csvQuote(key);
    out << ",status,exit_code,simulated_time_ns,speedup,compute_ns,memory_ns,exposed_comm_ns,"
           "idle_ns,tensor_busy,flop_utilisation,hbm_utilisation,busiest_link_utilisation,"
           "sim_wall_seconds,process_wall_seconds,error\n";
    for (const Row* row : allRows(table)) {
        out << row->id;
        for (const std::string& key : table.parameterKeys)
            out << "," << csvQuote(parameterValue(*row, key));
        out << "," << row->status << "," << row->exitCode;
        if (row->figures) {
            const RunFigures& f = *row->figures;
            const auto up = speedup(table, *row);
            out << "," << formatNumber(f.simulatedNs) << ","
                << (up ? formatNumber(*up) : std::string()) << "," << formatNumber(f.computeNs)
                << "," << formatNumber(f.memoryNs) << "," << formatNumber(f.exposedCommNs) << ","
                << formatNumber(f.idleNs) << "," << formatNumber(f.tensorBusy) << ","
                << formatNumber(f.flopUtilisation) << "," << formatNumber(f.hbmUtilisation) << ","
                << formatNumber(f.busiestLink) << "," << formatNumber(f.wallSeconds);
        } else {
            out << ",,,,,,,,,,,";
        }
        out << "," << formatNumber(row->processWallSeconds) << "," << csvQuote(row->error) << "\n";
    }
}

nlohmann::ordered_json tableToJson(const Table& table)
{
    auto rowJson = [&](const Row& row) {
        nlohmann::ordered_json json;
        json["id"] = row.id;
        nlohmann::ordered_json parameters = nlohmann::ordered_json::object();
        for (const auto& [key, value] : row.parameters)
            parameters[key] = value;
        json["parameters"] = parameters;
        json["status"] = row.status;
        json["exit_code"] = row.exitCode;
        if (!row.error.empty())
            json["error"] = row.error;
        json["process_wall_seconds"] = row.processWallSeconds;
        if (row.figures) {
            const RunFigures& f = *row.figures;
            json["outcome"] = f.outcome;
            json["simulated_time_ns"] = f.simulatedNs;
            if (const auto up = speedup(table, row))
                json["speedup"] = *up;
            json["breakdown_ns"] = {{"compute", f.computeNs},
                                    {"memory", f.memoryNs},
                                    {"exposed_comm", f.exposedCommNs},
                                    {"idle", f.idleNs}};
            json["utilisation"] = {{"tensor_busy", f.tensorBusy},
                                   {"flop", f.flopUtilisation},
                                   {"hbm", f.hbmUtilisation},
                                   {"busiest_link", f.busiestLink}};
            json["sim_wall_seconds"] = f.wallSeconds;
        }
        return json;
    };
    nlohmann::ordered_json json;
    json["parameter_keys"] = table.parameterKeys;
    if (table.base)
        json["base"] = rowJson(*table.base);
    json["points"] = nlohmann::ordered_json::array();
    for (const Row& row : table.rows)
        json["points"].push_back(rowJson(row));
    return json;
}

void writeMarkdown(std::ostream& out,
                   const Table& table,
                   const std::string& title,
                   const std::vector<std::string>& pictures)
{
    out << "# " << title << "\n\n";
    if (table.base && table.base->figures)
        out << "Base platform: " << readableTime(table.base->figures->simulatedNs)
            << " simulated. Speed-up = base time / point time.\n\n";
    out << "| rank | point |";
    for (const std::string& key : table.parameterKeys)
        out << " " << key << " |";
    out << " simulated | speed-up | compute | memory | exposed comm | idle | FLOP util | HBM util "
           "|\n|---|---|";
    for (std::size_t i = 0; i < table.parameterKeys.size(); ++i)
        out << "---|";
    out << "---|---|---|---|---|---|---|---|\n";
    std::size_t place = 0;
    for (const Row* row : rankRows(table)) {
        if (!row->figures)
            continue;
        const RunFigures& f = *row->figures;
        const auto up = speedup(table, *row);
        out << "| " << ++place << " | " << row->id << " |";
        for (const std::string& key : table.parameterKeys)
            out << " " << parameterValue(*row, key) << " |";
        out << " " << readableTime(f.simulatedNs) << " | " << (up ? fixed(*up, 3) : "-") << " | "
            << readableTime(f.computeNs) << " | " << readableTime(f.memoryNs) << " | "
            << readableTime(f.exposedCommNs) << " | " << readableTime(f.idleNs) << " | "
            << fixed(100.0 * f.flopUtilisation, 1) << " % | " << fixed(100.0 * f.hbmUtilisation, 1)
            << " % |\n";
    }
    bool anyFailed = false;
    for (const Row* row : allRows(table)) {
        if (row->figures)
            continue;
        if (!anyFailed)
            out << "\n## Points without results\n\n";
        anyFailed = true;
        out << "- " << row->id << " (" << row->status << ", exit code " << row->exitCode << "): `"
            << row->error.substr(0, row->error.find('\n')) << "`\n";
    }
    if (!pictures.empty()) {
        out << "\n## Pictures\n\n";
        for (const std::string& picture : pictures)
            out << "![" << picture << "](" << picture << ")\n";
    }
}

void writeText(std::ostream& out, const Table& table)
{
    std::vector<std::vector<std::string>> cells;
    std::vector<std::string> header{"id"};
    header.insert(header.end(), table.parameterKeys.begin(), table.parameterKeys.end());
    for (const char* name : {"status",
                             "simulated",
                             "speed-up",
                             "compute",
                             "memory",
                             "exposed comm",
                             "idle",
                             "FLOP util",
                             "HBM util"})
        header.push_back(name);
    cells.push_back(header);
    for (const Row* row : allRows(table)) {
        std::vector<std::string> line{row->id};
        for (const std::string& key : table.parameterKeys)
            line.push_back(parameterValue(*row, key));
        line.push_back(row->status);
        if (row->figures) {
            const RunFigures& f = *row->figures;
            const auto up = speedup(table, *row);
            for (const std::string& cell : {readableTime(f.simulatedNs),
                                            up ? fixed(*up, 3) : std::string("-"),
                                            readableTime(f.computeNs),
                                            readableTime(f.memoryNs),
                                            readableTime(f.exposedCommNs),
                                            readableTime(f.idleNs),
                                            fixed(100.0 * f.flopUtilisation, 1) + " %",
                                            fixed(100.0 * f.hbmUtilisation, 1) + " %"})
                line.push_back(cell);
        }
        cells.push_back(line);
    }
    std::vector<std::size_t> widths;
    for (const auto& line : cells)
        for (std::size_t c = 0; c < line.size(); ++c) {
            widths.resize(std::max(widths.size(), line.size()));
            widths[c] = std::max(widths[c], line[c].size());
        }
    for (const auto& line : cells) {
        std::string text;
        for (std::size_t c = 0; c < line.size(); ++c)
            text += line[c] + std::string(widths[c] - line[c].size() + 2, ' ');
        while (!text.empty() && text.back() == ' ')
            text.pop_back();
        out << text << "\n";
    }
    for (const Row* row : allRows(table))
        if (!row->figures && !row->error.empty())
            out << row->id << ": " << row->error.substr(0, row->error.find('\n')) << "\n";
}

std::string pictureName(const std::string& key)
{
    std::string name = "time_vs_";
    for (char c : key)
        name += (c == '.' || c == '[' || c == ']' || c == '/' || c == ' ') ? '_' : c;
    return name + ".svg";
}

void writeTimeVsParameterSvg(std::ostream& out, const Table& table, const std::string& key)
{
    struct Point {
        std::string label;
        double x;
        double ns;
        std::string id;
    };
    std::vector<Point> points;
    bool numeric = true;
    std::vector<std::string> categories;
    for (const Row& row : table.rows) {
        if (!row.figures)
            continue;
        const std::string value = parameterValue(row, key);
        numeric = numeric && leadingNumber(value).has_value();
        if (std::find(categories.begin(), categories.end(), value) == categories.end())
            categories.push_back(value);
        points.push_back({value, 0.0, row.figures->simulatedNs, row.id});
    }
    for (Point& point : points)
        point.x =
            numeric
                ? *leadingNumber(point.label)
                : static_cast<double>(std::find(categories.begin(), categories.end(), point.label) -
                                      categories.begin());
    const int width = 720;
    const int height = 420;
    const int left = 90;
    const int right = 30;
    const int top = 50;
    const int bottom = 60;
    const double plotWidth = width - left - right;
    const double plotHeight = height - top - bottom;
    double xMin = 0.0;
    double xMax = 1.0;
    double yMax = 1.0;
    if (!points.empty()) {
        xMin = xMax = points.front().x;
        for (const Point& point : points) {
            xMin = std::min(xMin, point.x);
            xMax = std::max(xMax, point.x);
            yMax = std::max(yMax, point.ns);
        }
    }
    if (table.base && table.base->figures)
        yMax = std::max(yMax, table.base->figures->simulatedNs);
    if (xMax == xMin) {
        xMin -= 1.0;
        xMax += 1.0;
    }
    auto px = [&](double x) { return left + plotWidth * (x - xMin) / (xMax - xMin); };
    auto py = [&](double ns) { return top + plotHeight * (1.0 - ns / (yMax * 1.05)); };

    svgBegin(out, width, height);
    svgText(out, left, 24, "simulated time against " + key, "start", 16);
    out << "<line x1=\"" << left << "\" y1=\"" << top + plotHeight << "\" x2=\"" << left + plotWidth
        << "\" y2=\"" << top + plotHeight << "\" stroke=\"black\"/>\n";
    out << "<line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\""
        << top + plotHeight << "\" stroke=\"black\"/>\n";
    for (int tick = 0; tick <= 4; ++tick) {
        const double ns = yMax * 1.05 * tick / 4.0;
        svgText(out, left - 6, py(ns) + 4, readableTime(ns), "end");
    }
    if (table.base && table.base->figures) {
        const double y = py(table.base->figures->simulatedNs);
        out << "<line x1=\"" << left << "\" y1=\"" << y << "\" x2=\"" << left + plotWidth
            << "\" y2=\"" << y << "\" stroke=\"#999999\" stroke-dasharray=\"4 3\"/>\n";
        svgText(out, left + plotWidth, y - 4, "base", "end");
    }
    std::vector<std::string> labelled;
    for (const Point& point : points) {
        out << "<circle cx=\"" << px(point.x) << "\" cy=\"" << py(point.ns)
            << "\" r=\"4\" fill=\"#4e79a7\"><title>" << svgEscape(point.id) << ": "
            << svgEscape(point.label) << ", " << readableTime(point.ns) << "</title></circle>\n";
        if (std::find(labelled.begin(), labelled.end(), point.label) == labelled.end()) {
            labelled.push_back(point.label);
            svgText(out, px(point.x), top + plotHeight + 18, point.label, "middle");
        }
    }
    svgText(out, left + plotWidth / 2, height - 16, key, "middle");
    svgEnd(out);
}

void writeBreakdownSvg(std::ostream& out, const Table& table, const std::string& title)
{
    std::vector<const Row*> rows;
    double most = 0.0;
    for (const Row* row : allRows(table))
        if (row->figures) {
            rows.push_back(row);
            most = std::max(most, row->figures->simulatedNs);
        }
    const int left = 240;
    const int width = 960;
    const int plotWidth = width - left - 110;
    const int top = 60;
    const int barHeight = 16;
    const int height = top + static_cast<int>(rows.size()) * (barHeight + 6) + 40;
    svgBegin(out, width, height);
    svgText(out, 20, 22, title + ": mean time per rank", "start", 16);
    svgBreakdownLegend(out, 20, 34);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& row = *rows[i];
        const RunFigures& f = *row.figures;
        const int y = top + static_cast<int>(i) * (barHeight + 6);
        std::string label = row.id;
        for (const auto& [key, value] : row.parameters)
            label += " " + value;
        if (label.size() > 34)
            label = label.substr(0, 33) + "…";
        svgText(out, left - 6, y + barHeight - 3, label, "end");
        const double parts[] = {f.computeNs, f.memoryNs, f.exposedCommNs, f.idleNs};
        double x = left;
        for (std::size_t p = 0; p < breakdownParts.size(); ++p) {
            const double w = most > 0 ? plotWidth * parts[p] / most : 0.0;
            if (w > 0)
                out << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << w << "\" height=\""
                    << barHeight << "\" fill=\"" << breakdownParts[p].colour << "\"><title>"
                    << svgEscape(row.id) << " " << breakdownParts[p].label << ": "
                    << readableTime(parts[p]) << "</title></rect>\n";
            x += w;
        }
        svgText(out, x + 6, y + barHeight - 3, readableTime(f.simulatedNs));
    }
    svgEnd(out);
}

} // namespace etsim::sweep
