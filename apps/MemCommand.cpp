#include "apps/MemCommand.h"

#include "kernel/Config.h"
#include "kernel/Error.h"
#include "kernel/Units.h"
#include "models/hbm/DramsysImport.h"
#include "models/hbm/HbmConfig.h"
#include "models/hbm/MemTraffic.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace etsim::apps {

namespace {

namespace hbm = etsim::hbm;

struct MemOptions {
    std::string preset = std::string(enumName(hbm::presetNames, hbm::defaultPreset));
    std::string config;
    std::string fidelity = "detailed";
    bool fidelityGiven = false;
    std::string pattern = "sequential";
    std::string size = "64 B";
    std::string stride = "4 KiB";
    std::uint64_t count = 10000;
    double writeFraction = 0.0;
    bool writeFractionGiven = false;
    std::uint64_t burst = 64;
    bool burstGiven = false;
    std::string base = "0";
    std::string range = "0 B";
    std::string rate = "0 B/s";
    std::uint64_t seed = 1;
    std::uint32_t outstanding = 16;
    std::string trace;
    std::string format;
    std::string clock;
    std::string dramsys;
    std::string commands;
    bool outstandingGiven = false;
    bool sizeGiven = false;
    bool json = false;
};

// A failure whose exit code is already decided.
struct Stop {
    ExitCode code;
    std::string message;
};

[[noreturn]] void cannotStart(const std::string& message)
{
    throw Stop{ExitCode::CannotStart, message};
}

template <typename T>
T parseUnit(const std::string& option, const std::string& text)
{
    try {
        return T::parse(text);
    } catch (const Error& error) {
        cannotStart(option + ": " + error.what());
    }
}

// Sizes: "64 KiB", or a bare byte count ("32").
Size parseSize(const std::string& option, const std::string& text)
{
    bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
    return parseUnit<Size>(option, digits ? text + " B" : text);
}

template <typename E, std::size_t N>
E parseName(const std::string& option, const std::string& text, const EnumName<E> (&names)[N])
{
    for (const auto& entry : names)
        if (entry.name == text)
            return entry.value;
    std::string allowed;
    for (const auto& entry : names)
        allowed += (allowed.empty() ? "" : ", ") + std::string(entry.name);
    cannotStart(option + " " + text + ": use " + allowed);
}

hbm::HbmConfig memoryConfig(const MemOptions& o)
{
    hbm::HbmConfig config;
    bool fidelityInFile = false;
    if (!o.config.empty()) {
        try {
            config = loadConfigFile(o.config).map([&](ConfigMap& map) {
                // The file holds the hbm map, at its top or under an `hbm` key.
                if (!map.has("hbm")) {
                    fidelityInFile = map.has("fidelity");
                    return hbm::parseHbmConfig(map);
                }
                hbm::HbmConfig parsed;
                map.nested("hbm", [&](ConfigMap& section) {
                    fidelityInFile = section.has("fidelity");
                    parsed = hbm::parseHbmConfig(section);
                });
                return parsed;
            });
        } catch (const FileAccessError& error) {
            throw Stop{ExitCode::CannotStart, "--config " + o.config + ": " + error.problem()};
        } catch (const Error& error) {
            throw Stop{ExitCode::InputProblem, error.what()};
        }
    } else {
        config = hbm::hbmPreset(parseName("--preset", o.preset, hbm::presetNames));
    }
    if (o.fidelityGiven || !fidelityInFile)
        config.fidelity = parseName("--fidelity", o.fidelity, hbm::fidelityNames);
    return config;
}

std::uint64_t parseAddress(const std::string& text)
{
    try {
        std::size_t used = 0;
        std::uint64_t value = std::stoull(text, &used, 0);
        if (used == text.size())
            return value;
    } catch (const std::exception&) {
    }
    cannotStart("--base " + text + ": give an address, decimal or 0x-prefixed hexadecimal");
}

std::string fixed(double value, int digits)
{
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

std::string gigabytesPerSecond(double bytesPerSecond)
{
    return fixed(bytesPerSecond * 1e-9, 1) + " GB/s";
}

void printText(const hbm::MemoryRunReport& r, const std::string& trafficLine)
{
    std::cout << "memory: " << r.preset << ", " << enumName(hbm::fidelityNames, r.fidelity)
              << ", peak " << gigabytesPerSecond(r.peakBytesPerSecond) << "\n"
              << trafficLine << "\n"
              << "requests: " << r.requests() << " (" << r.reads << " reads, " << r.writes
              << " writes), " << r.bytesRead + r.bytesWritten << " B\n"
              << "time: " << fixed(static_cast<double>(r.lastDonePs - r.firstIssuePs) * 1e-3, 3)
              << " ns (first issue to last data beat)\n"
              << "bandwidth: " << gigabytesPerSecond(r.bandwidth()) << " ("
              << fixed(r.peakFraction() * 100.0, 1) << " % of peak)\n";
    const hbm::LatencySummary& l = r.latency;
    std::cout << "latency (ns): min " << fixed(l.minNs, 3) << ", mean " << fixed(l.meanNs, 3)
              << ", p50 " << fixed(l.p50Ns, 3) << ", p90 " << fixed(l.p90Ns, 3) << ", p99 "
              << fixed(l.p99Ns, 3) << ", max " << fixed(l.maxNs, 3) << "\n"
              << "latency histogram (ns, non-empty buckets):\n";
    for (std::size_t i = 0; i < l.buckets.size(); ++i) {
        if (l.buckets[i] == 0)
            continue;
        std::string label = i < l.edgesNs.size() ? "<= " + fixed(l.edgesNs[i], 0)
                                                 : "> " + fixed(l.edgesNs.back(), 0);
        std::cout << "  " << label << std::string(label.size() < 10 ? 10 - label.size() : 1, ' ')
                  << l.buckets[i] << "\n";
    }
    if (!r.rowBuffer) {
        std::cout << "row buffer: not modelled by the analytic fidelity\n";
        return;
    }
    const hbm::RowBufferSummary& rows = *r.rowBuffer;
    std::cout << "row buffer: " << rows.hits << " hits, " << rows.misses << " misses (idle bank), "
              << rows.conflicts << " conflicts; hit rate " << fixed(rows.hitRate() * 100.0, 1)
              << " %\n"
              << "activates: " << rows.activates << ", refreshes: " << rows.refreshes
              << ", read/write switches: " << rows.readWriteSwitches << "\n";
}

nlohmann::json toJson(const hbm::MemoryRunReport& r, nlohmann::json traffic)
{
    nlohmann::json out;
    out["memory"] = {{"preset", r.preset},
                     {"fidelity", std::string(enumName(hbm::fidelityNames, r.fidelity))},
                     {"peakBytesPerSecond", r.peakBytesPerSecond}};
    out["traffic"] = std::move(traffic);
    out["requests"] = r.requests();
    out["reads"] = r.reads;
    out["writes"] = r.writes;
    out["bytesRead"] = r.bytesRead;
    out["bytesWritten"] = r.bytesWritten;
    out["firstIssuePs"] = r.firstIssuePs;
    out["lastDonePs"] = r.lastDonePs;
    out["bandwidthBytesPerSecond"] = r.bandwidth();
    out["peakFraction"] = r.peakFraction();
    const hbm::LatencySummary& l = r.latency;
    nlohmann::json histogram = nlohmann::json::array();
    for (std::size_t i = 0; i < l.buckets.size(); ++i)
        histogram.push_back(
            {{"upToNs", i < l.edgesNs.size() ? nlohmann::json(l.edgesNs[i]) : nlohmann::json()},
             {"count", l.buckets[i]}});
    out["latencyNs"] = {{"count", l.count},
                        {"min", l.minNs},
                        {"mean", l.meanNs},
                        {"p50", l.p50Ns},
                        {"p90", l.p90Ns},
                        {"p99", l.p99Ns},
                        {"max", l.maxNs},
                        {"histogram", histogram}};
    if (r.rowBuffer) {
        const hbm::RowBufferSummary& rows = *r.rowBuffer;
        out["rowBuffer"] = {{"hits", rows.hits},
                            {"misses", rows.misses},
                            {"conflicts", rows.conflicts},
                            {"hitRate", rows.hitRate()},
                            {"activates", rows.activates},
                            {"refreshes", rows.refreshes},
                            {"readWriteSwitches", rows.readWriteSwitches}};
    } else {
        out["rowBuffer"] = nullptr;
    }
    return out;
}

// The command timeline of --commands, written to a temporary file that replaces FILE once the
// run has finished (a failed run leaves no half-written timeline).
class CommandLog {
public:
    explicit CommandLog(const std::string& path) : path(path), temporary(path + ".tmp")
    {
        out.open(temporary);
        if (!out)
            cannotStart("--commands " + path + ": cannot write " + temporary);
        out << "cycle,pc,bank,command,row\n";
    }
    void write(std::uint32_t pc,
               std::uint64_t cycle,
               hbm::Command command,
               std::uint32_t bank,
               std::uint32_t row)
    {
        out << cycle << ',' << pc << ',' << bank << ',' << hbm::toString(command) << ',' << row
            << '\n';
    }
    void commit()
    {
        out.close();
        if (!out)
            cannotStart("--commands " + path + ": writing " + temporary + " failed");
        std::filesystem::rename(temporary, path);
    }
    ~CommandLog()
    {
        if (out.is_open()) {
            out.close();
            std::error_code ignored;
            std::filesystem::remove(temporary, ignored);
        }
    }

private:
    std::string path;
    std::string temporary;
    std::ofstream out;
};

ExitCode runMem(const MemOptions& o)
{
    std::optional<hbm::DramsysSimulation> dramsys;
    if (!o.dramsys.empty()) {
        if (!o.config.empty())
            cannotStart("--dramsys and --config both describe the memory; give one");
        try {
            dramsys = hbm::loadDramsysSimulation(o.dramsys);
        } catch (const Error& error) {
            throw Stop{ExitCode::InputProblem, error.what()};
        }
    }
    hbm::HbmConfig config = dramsys ? dramsys->config : memoryConfig(o);
    if (dramsys && o.fidelityGiven)
        config.fidelity = parseName("--fidelity", o.fidelity, hbm::fidelityNames);
    try {
        hbm::validate(config);
    } catch (const Error& error) {
        throw Stop{ExitCode::InputProblem, error.what()};
    }
    const Size size = parseSize("--size", o.size);
    if (size.bytes() == 0)
        cannotStart("--size " + o.size + ": a request moves at least 1 B");
    hbm::MemoryRunOptions run;
    run.outstanding = o.outstanding;
    std::unique_ptr<CommandLog> log;
    if (!o.commands.empty()) {
        if (config.fidelity != hbm::Fidelity::Detailed)
            cannotStart("--commands: the analytic fidelity issues no commands; use --fidelity "
                        "detailed");
        log = std::make_unique<CommandLog>(o.commands);
        run.commands = [&log](std::uint32_t pc,
                              std::uint64_t cycle,
                              hbm::Command command,
                              std::uint32_t bank,
                              std::uint32_t row) { log->write(pc, cycle, command, bank, row); };
    }

    std::string trafficLine;
    nlohmann::json traffic;
    std::unique_ptr<hbm::TrafficGenerator> generator;
    std::ifstream traceFile;
    std::unique_ptr<hbm::StlReader> reader;
    hbm::RequestSource source;
    const std::string limit =
        o.outstanding == 0 ? std::string("no limit") : std::to_string(o.outstanding);
    std::unique_ptr<hbm::DramsysGenerator> dramsysGenerator;
    const hbm::DramsysInitiator* initiator =
        dramsys && dramsys->initiator ? &*dramsys->initiator : nullptr;
    std::string tracePath = o.trace;
    Size traceRequestSize = size;
    std::string traceClock = o.clock;
    if (initiator) {
        if (!o.outstandingGiven)
            run.outstanding = initiator->maxPending;
        if (o.trace.empty() && initiator->kind == hbm::DramsysInitiator::Kind::Player)
            tracePath = initiator->name;
        if (!o.sizeGiven)
            traceRequestSize = Size::fromBytes(initiator->dataLength);
        if (o.clock.empty())
            traceClock = toString(initiator->clock);
    }
    const std::string limitText =
        run.outstanding == 0 ? std::string("no limit") : std::to_string(run.outstanding);
    if (initiator && tracePath.empty()) {
        try {
            dramsysGenerator = std::make_unique<hbm::DramsysGenerator>(
                *initiator, config.organisation.deviceBytes());
        } catch (const Error& error) {
            throw Stop{ExitCode::InputProblem, o.dramsys + ": " + error.what()};
        }
        source = [&dramsysGenerator](hbm::MemRequest& request) {
            return dramsysGenerator->next(request);
        };
        trafficLine = "traffic: " + o.dramsys + " generator " + initiator->name + " (" +
                      (initiator->random ? "random" : "sequential") + ", " +
                      std::to_string(initiator->numRequests) + " requests of " +
                      std::to_string(initiator->dataLength) + " B at " +
                      toString(initiator->clock) + ", read ratio " + fixed(initiator->rwRatio, 2) +
                      "), " + limitText + " outstanding";
        traffic = {{"source", "dramsys-generator"},
                   {"file", o.dramsys},
                   {"name", initiator->name},
                   {"random", initiator->random},
                   {"count", initiator->numRequests},
                   {"requestBytes", initiator->dataLength},
                   {"rwRatio", initiator->rwRatio},
                   {"clockHz", initiator->clock.hz()},
                   {"outstanding", run.outstanding}};
    } else if (!tracePath.empty()) {
        traceFile.open(tracePath);
        if (!traceFile)
            cannotStart("--trace " + tracePath + ": cannot open the file");
        std::string format = o.format;
        if (format.empty())
            format = std::filesystem::path(tracePath).extension() == ".rstl" ? "rstl" : "stl";
        if (format != "stl" && format != "rstl")
            cannotStart("--format " + format + ": use stl (absolute cycles) or rstl (relative)");
        Frequency clock = traceClock.empty() ? config.organisation.clock
                                             : parseUnit<Frequency>("--clock", traceClock);
        if (!(clock.hz() > 0.0))
            cannotStart("--clock " + traceClock + ": must be positive");
        reader = std::make_unique<hbm::StlReader>(traceFile,
                                                  tracePath,
                                                  format == "rstl" ? hbm::StlTiming::Relative
                                                                   : hbm::StlTiming::Absolute,
                                                  clock,
                                                  traceRequestSize.bytes());
        source = [&reader](hbm::MemRequest& request) { return reader->next(request); };
        trafficLine = "traffic: trace " + tracePath + " (" + format + ", cycles of " +
                      toString(clock) + "), " + limitText + " outstanding";
        traffic = {{"source", "trace"},
                   {"file", tracePath},
                   {"format", format},
                   {"clockHz", clock.hz()},
                   {"outstanding", run.outstanding}};
    } else {
        hbm::TrafficSpec spec;
        spec.pattern = parseName("--pattern", o.pattern, hbm::addressPatternNames);
        spec.requestSize = size;
        spec.count = o.count;
        spec.writeFraction = o.writeFraction;
        spec.burst = o.burst;
        const bool copy = spec.pattern == hbm::AddressPattern::Copy;
        if (copy && o.writeFractionGiven)
            cannotStart("--write-fraction: the copy pattern writes every block it reads (one "
                        "write per read); leave the option out");
        if (!copy && o.burstGiven)
            cannotStart("--burst: only the copy pattern issues bursts; add --pattern copy");
        spec.stride = parseSize("--stride", o.stride);
        spec.base = parseAddress(o.base);
        spec.range = parseSize("--range", o.range);
        spec.rate = parseUnit<Bandwidth>("--rate", o.rate);
        spec.seed = o.seed;
        try {
            generator =
                std::make_unique<hbm::TrafficGenerator>(spec, config.organisation.deviceBytes());
        } catch (const Error& error) {
            cannotStart(error.what());
        }
        source = [&generator](hbm::MemRequest& request) { return generator->next(request); };
        // The copy pattern's mix is one write per read, in bursts.
        const double writeFraction = copy ? 0.5 : o.writeFraction;
        trafficLine =
            "traffic: " + o.pattern + ", " + toString(size) + " requests, " +
            fixed(writeFraction * 100.0, 1) + " % writes" +
            (copy ? " in bursts of " + std::to_string(o.burst) : std::string()) + ", " + limit +
            " outstanding" +
            (spec.rate.bytesPerSecond() > 0.0 ? ", offered " + toString(spec.rate) : std::string());
        traffic = {{"source", "generator"},
                   {"pattern", o.pattern},
                   {"requestBytes", size.bytes()},
                   {"count", o.count},
                   {"writeFraction", writeFraction},
                   {"strideBytes", spec.stride.bytes()},
                   {"rateBytesPerSecond", spec.rate.bytesPerSecond()},
                   {"outstanding", o.outstanding}};
        if (copy)
            traffic["burst"] = o.burst;
    }

    hbm::MemoryRunReport report;
    try {
        report = hbm::runMemory(config, source, run);
    } catch (const Error& error) {
        throw Stop{ExitCode::InputProblem, error.what()};
    }
    if (log)
        log->commit();
    if (o.json)
        std::cout << toJson(report, std::move(traffic)).dump(2) << "\n";
    else
        printText(report, trafficLine);
    return ExitCode::Success;
}

} // namespace

void addMemCommand(CLI::App& app, ExitCode& result)
{
    auto o = std::make_shared<MemOptions>();
    CLI::App* mem = app.add_subcommand(
        "mem", "Drive the HBM model alone with generated traffic or an STL request trace");
    std::string presets;
    for (const auto& entry : hbm::presetNames)
        presets += (presets.empty() ? "" : ", ") + std::string(entry.name);
    mem->add_option("--preset", o->preset, "HBM preset: " + presets)->capture_default_str();
    mem->add_option("--config",
                    o->config,
                    "YAML file with the hbm map (at its top or under `hbm:`, keys of docs/hbm.md); "
                    "replaces --preset");
    CLI::Option* fidelity =
        mem->add_option("--fidelity", o->fidelity, "detailed or analytic")->capture_default_str();
    mem->add_option("--pattern",
                    o->pattern,
                    "Generated addresses: sequential, strided, random, or copy (bursts of reads "
                    "from the range's first half, then bursts of writes to its second half)")
        ->capture_default_str();
    CLI::Option* size =
        mem->add_option(
               "--size",
               o->size,
               "Bytes per request, e.g. 64 or \"4 KiB\" (also of trace lines without a length)")
            ->capture_default_str();
    mem->add_option("--stride", o->stride, "Strided: distance between requests")
        ->capture_default_str();
    mem->add_option("--count", o->count, "Generated requests")->capture_default_str();
    CLI::Option* writeFraction =
        mem->add_option("--write-fraction", o->writeFraction, "Share of writes, 0 to 1")
            ->capture_default_str();
    CLI::Option* burst =
        mem->add_option("--burst", o->burst, "Copy: requests per read burst and per write burst")
            ->capture_default_str();
    mem->add_option("--base", o->base, "First address of the generated region")
        ->capture_default_str();
    mem->add_option("--range", o->range, "Bytes the generated addresses cover (0: the capacity)")
        ->capture_default_str();
    mem->add_option("--rate",
                    o->rate,
                    "Offered load, e.g. \"400 GB/s\": request i arrives at i x size / rate "
                    "(0: all at once, paced by --outstanding)")
        ->capture_default_str();
    mem->add_option("--seed", o->seed, "Seed of the random pattern")->capture_default_str();
    CLI::Option* outstanding =
        mem->add_option("--outstanding", o->outstanding, "Requests in flight at most (0: no limit)")
            ->capture_default_str();
    mem->add_option(
        "--trace", o->trace, "Replay an STL request trace instead of generating traffic");
    mem->add_option("--format",
                    o->format,
                    "Trace format: stl (absolute cycles) or rstl (relative); default by the "
                    "extension (.rstl: rstl)");
    mem->add_option("--clock", o->clock, "Clock of the trace's cycles (default: the memory's CK)");
    mem->add_option("--dramsys",
                    o->dramsys,
                    "DRAMSys simulation file (JSON): its memspec, address mapping, mcconfig and "
                    "simconfig build the memory, its tracesetup the traffic (docs/hbm.md); "
                    "replaces --preset");
    mem->add_option("--commands",
                    o->commands,
                    "Write every issued command (cycle, pc, bank, command, row) to this CSV "
                    "file (detailed fidelity)");
    mem->add_flag("--json", o->json, "Print one JSON object instead of text");
    mem->callback([o, fidelity, writeFraction, burst, outstanding, size, &result]() {
        o->fidelityGiven = fidelity->count() > 0;
        o->outstandingGiven = outstanding->count() > 0;
        o->sizeGiven = size->count() > 0;
        o->writeFractionGiven = writeFraction->count() > 0;
        o->burstGiven = burst->count() > 0;
        try {
            result = runMem(*o);
        } catch (const Stop& stop) {
            std::cerr << "etsim mem: " << stop.message << "\n";
            result = stop.code;
        }
    });
}

} // namespace etsim::apps
