#include "models/hbm/DramsysImport.h"

#include "kernel/Error.h"
#include "kernel/InputFile.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace etsim::hbm {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// One JSON object of one file: every key read is marked, and finish() refuses the rest, so a
// key etsim does not model is never dropped silently.
class Section {
public:
    Section(std::string file, std::string path, const json& object)
        : file(std::move(file)), path(std::move(path)), object(object)
    {
        if (!object.is_object())
            fail("", "must be a JSON object");
    }

    [[noreturn]] void fail(const std::string& key, const std::string& problem) const
    {
        std::string where = key.empty() ? path : path + "." + key;
        throw Error(file + ": " + where + ": " + problem);
    }

    bool has(const std::string& key) const { return object.contains(key); }

    const json& at(const std::string& key)
    {
        if (!object.contains(key))
            fail(key, "missing; DRAMSys requires it");
        seen.insert(key);
        return object.at(key);
    }

    std::uint64_t unsignedValue(const std::string& key)
    {
        const json& v = at(key);
        if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
            fail(key, "must be a non-negative integer, got " + v.dump());
        return v.get<std::uint64_t>();
    }

    std::optional<std::uint64_t> optionalUnsigned(const std::string& key)
    {
        if (!has(key))
            return std::nullopt;
        return unsignedValue(key);
    }

    double number(const std::string& key)
    {
        const json& v = at(key);
        if (!v.is_number())
            fail(key, "must be a number, got " + v.dump());
        return v.get<double>();
    }

    std::string text(const std::string& key)
    {
        const json& v = at(key);
        if (!v.is_string())
            fail(key, "must be a string, got " + v.dump());
        return v.get<std::string>();
    }

    bool flag(const std::string& key)
    {
        const json& v = at(key);
        if (!v.is_boolean())
            fail(key, "must be true or false, got " + v.dump());
        return v.get<bool>();
    }

    /// A string key that must hold one of `allowed` (the first is the default when absent).
    std::string
    choice(const std::string& key, const std::vector<std::string>& allowed, const std::string& why)
    {
        if (!has(key))
            return allowed.front();
        std::string value = text(key);
        for (const std::string& a : allowed)
            if (a == value)
                return value;
        std::string list;
        for (const std::string& a : allowed)
            list += (list.empty() ? "" : ", ") + a;
        fail(key, "\"" + value + "\" is not modelled by etsim (" + why + "); supported: " + list);
    }

    /// An unsigned key that must be `only` (its DRAMSys default when absent).
    void only(const std::string& key, std::uint64_t only, const std::string& why)
    {
        if (std::optional<std::uint64_t> v = optionalUnsigned(key); v && *v != only)
            fail(key,
                 std::to_string(*v) + " is not modelled by etsim (" + why +
                     "); supported: " + std::to_string(only));
    }

    void onlyFlag(const std::string& key, bool only, const std::string& why)
    {
        if (has(key) && flag(key) != only)
            fail(key,
                 std::string(only ? "false" : "true") + " is not modelled by etsim (" + why +
                     "); supported: " + (only ? "true" : "false"));
    }

    /// A key that has no effect on timing; read so that it is not refused.
    void accept(const std::string& key)
    {
        if (has(key))
            seen.insert(key);
    }

    void finish() const
    {
        for (auto it = object.begin(); it != object.end(); ++it)
            if (seen.count(it.key()) == 0)
                fail(it.key(),
                     "not modelled by etsim; docs/hbm.md (\"DRAMSys configurations\") lists the "
                     "keys it maps");
    }

    const std::string& fileName() const { return file; }

private:
    std::string file;
    std::string path;
    const json& object;
    std::set<std::string> seen;
};

json readJson(const std::string& file)
{
    std::ifstream in(file, std::ios::binary);
    if (!in)
        throw Error(file + ": cannot open the file");
    std::ostringstream text;
    text << in.rdbuf();
    return parseJson(text.str(), file);
}

// A part of the simulation: inline, or a file (relative to the simulation file) whose top
// object holds `key`.
struct Part {
    std::string file;
    json content;
};

Part loadPart(Section& simulation, const std::string& key, const fs::path& folder)
{
    const json& v = simulation.at(key);
    if (v.is_object())
        return Part{simulation.fileName(), v};
    if (!v.is_string())
        simulation.fail(key, "must be a file name or an object");
    std::string file = (folder / v.get<std::string>()).string();
    json whole = readJson(file);
    if (!whole.is_object() || !whole.contains(key))
        throw Error(file + ": must hold an object under \"" + key + "\"");
    if (whole.size() != 1)
        for (auto it = whole.begin(); it != whole.end(); ++it)
            if (it.key() != key)
                throw Error(file + ": " + it.key() +
                            ": not modelled by etsim; the file holds only \"" + key + "\"");
    return Part{file, whole.at(key)};
}

std::uint32_t narrow(Section& s, const std::string& key, std::uint64_t value)
{
    if (value == 0 || value > 0xffffffffu)
        s.fail(key, "must be between 1 and 4294967295, got " + std::to_string(value));
    return static_cast<std::uint32_t>(value);
}

void readMemspec(const Part& part, HbmConfig& config)
{
    Section spec(part.file, "memspec", part.content);
    std::string type = spec.text("memoryType");
    if (type != "HBM2")
        spec.fail("memoryType", "\"" + type + "\" is not modelled by etsim; supported: HBM2");
    spec.accept("memoryId");

    Section arch(part.file, "memspec.memarchitecturespec", spec.at("memarchitecturespec"));
    Organisation& org = config.organisation;
    org.stacks = 1;
    org.channelsPerStack = narrow(arch, "nbrOfChannels", arch.unsignedValue("nbrOfChannels"));
    org.pcsPerChannel =
        narrow(arch, "nbrOfPseudoChannels", arch.unsignedValue("nbrOfPseudoChannels"));
    org.pcWidthBits = narrow(arch, "width", arch.unsignedValue("width"));
    org.burstLength = narrow(arch, "burstLength", arch.unsignedValue("burstLength"));
    if (arch.unsignedValue("maxBurstLength") != org.burstLength)
        arch.fail("maxBurstLength",
                  "a maximum burst other than burstLength is not modelled by etsim; supported: "
                  "maxBurstLength == burstLength");
    std::uint64_t dataRate = arch.unsignedValue("dataRate");
    if (dataRate != 1 && dataRate != 2)
        arch.fail("dataRate", "supported: 1 (SDR) or 2 (DDR)");
    std::uint32_t sids = narrow(arch, "nbrOfStacks", arch.unsignedValue("nbrOfStacks"));
    std::uint32_t groups = narrow(arch, "nbrOfBankGroups", arch.unsignedValue("nbrOfBankGroups"));
    std::uint32_t banks = narrow(arch, "nbrOfBanks", arch.unsignedValue("nbrOfBanks"));
    if (groups % sids != 0)
        arch.fail("nbrOfBankGroups", "must be a multiple of nbrOfStacks (bank groups per stack)");
    if (banks % groups != 0)
        arch.fail("nbrOfBanks", "must be a multiple of nbrOfBankGroups");
    org.sids = sids;
    org.bankGroups = groups / sids;
    org.banksPerGroup = banks / groups;
    org.rows = narrow(arch, "nbrOfRows", arch.unsignedValue("nbrOfRows"));
    std::uint64_t columns = arch.unsignedValue("nbrOfColumns");
    org.page = Size::fromBytes(columns * org.burstBytes());
    arch.only("nbrOfDevices", 1, "one device per channel");
    arch.finish();

    Section t(part.file, "memspec.memtimingspec", spec.at("memtimingspec"));
    double tck = t.number("tCK");
    if (!(tck > 0.0))
        t.fail("tCK", "must be positive (seconds)");
    org.clock = Frequency::fromHz(1.0 / tck);
    org.dataRate = Bandwidth::fromBytesPerSecond(static_cast<double>(dataRate) / tck / 8.0);
    org.stackInterleave = Size::fromBytes(org.stackBytes());
    auto cycles = [&](const char* key) { return narrow(t, key, t.unsignedValue(key)); };
    Timing& tm = config.timing;
    // RD data ends RL + tDQSCK + burst after the command (DRAMSys's data strobe window).
    tm.cl = cycles("RL") + static_cast<std::uint32_t>(t.unsignedValue("DQSCK"));
    tm.cwl = cycles("WL");
    tm.rcdRd = cycles("RCDRD");
    tm.rcdWr = cycles("RCDWR");
    tm.rp = cycles("RP");
    tm.ras = cycles("RAS");
    tm.rc = cycles("RC");
    tm.wr = cycles("WR");
    tm.rtp = cycles("RTP");
    tm.ccdS = cycles("CCDS");
    tm.ccdL = cycles("CCDL");
    tm.ccdR = cycles("CCDR");
    tm.rrdS = cycles("RRDS");
    tm.rrdL = cycles("RRDL");
    tm.faw = cycles("FAW");
    tm.wtrS = cycles("WTRS");
    tm.wtrL = cycles("WTRL");
    tm.rtw = cycles("RTW");
    tm.rfc = cycles("RFC");
    tm.rfcPb = cycles("RFCSB");
    tm.refi = cycles("REFI");
    tm.rrefd = cycles("RREFD");
    // DRAMSys's HBM2 checker has no PRE-to-PRE rule: the row bus alone spaces them.
    tm.ppd = 1;
    t.only("PL", 0, "parity latency");
    // DRAMSys's HBM2 per-bank interval: a REFSB every REFISB, whatever the bank count.
    tm.refiPb = cycles("REFISB");
    // Power-down and self-refresh exits: read by a policy etsim refuses below (power-down),
    // so they cannot change a run.
    for (const char* unused : {"CKE", "XP", "XS"})
        t.unsignedValue(unused);
    t.finish();
    spec.finish();
}

void readAddressMapping(const Part& part, HbmConfig& config)
{
    Section s(part.file, "addressmapping", part.content);
    AddressMapBits map;
    struct Key {
        const char* name;
        AddressField field;
    };
    const Key keys[] = {{"BYTE_BIT", AddressField::Byte},
                        {"BURST_BIT", AddressField::Byte},
                        {"COLUMN_BIT", AddressField::Column},
                        {"CHANNEL_BIT", AddressField::Channel},
                        {"PSEUDOCHANNEL_BIT", AddressField::PseudoChannel},
                        {"BANKGROUP_BIT", AddressField::BankGroup},
                        {"BANK_BIT", AddressField::Bank},
                        {"STACK_BIT", AddressField::Sid},
                        {"ROW_BIT", AddressField::Row}};
    for (const Key& key : keys) {
        if (!s.has(key.name))
            continue;
        const json& bits = s.at(key.name);
        if (!bits.is_array())
            s.fail(key.name, "must be a list of address bits");
        for (const json& bit : bits) {
            if (!bit.is_number_unsigned() || bit.get<std::uint64_t>() > 63)
                s.fail(key.name, "bits must be integers 0..63, got " + bit.dump());
            map.field(key.field).push_back(static_cast<std::uint8_t>(bit.get<std::uint64_t>()));
        }
    }
    std::sort(map.field(AddressField::Byte).begin(), map.field(AddressField::Byte).end());
    for (const char* refused : {"RANK_BIT", "XOR"})
        if (s.has(refused))
            s.fail(refused,
                   "not modelled by etsim (HBM2 has pseudo-channels, no ranks; no XOR "
                   "hashing); supported: BYTE_BIT, BURST_BIT, COLUMN_BIT, CHANNEL_BIT, "
                   "PSEUDOCHANNEL_BIT, BANKGROUP_BIT, BANK_BIT, STACK_BIT, ROW_BIT");
    s.finish();
    if (std::optional<ParamViolation> bad = addressMapProblem(map, config.organisation))
        s.fail(bad->key, bad->problem);
    config.addressMap = map;
}

void readMcconfig(const Part& part, HbmConfig& config)
{
    Section s(part.file, "mcconfig", part.content);
    ControllerConfig& c = config.controller;
    std::string page = s.choice(
        "PagePolicy", {"Open", "Closed", "OpenAdaptive", "ClosedAdaptive"}, "page policies");
    c.pagePolicy = page == "Open"           ? PagePolicyKind::Open
                   : page == "Closed"       ? PagePolicyKind::Closed
                   : page == "OpenAdaptive" ? PagePolicyKind::OpenAdaptive
                                            : PagePolicyKind::ClosedAdaptive;
    s.choice("Scheduler", {"FrFcfs"}, "the grouped and watermark schedulers are not modelled");
    c.scheduler = SchedulerKind::FrFcfs;
    std::string buffer =
        s.choice("SchedulerBuffer", {"Bankwise", "ReadWrite", "Shared"}, "buffer organisations");
    c.buffer = buffer == "Bankwise"    ? RequestBuffer::Bankwise
               : buffer == "ReadWrite" ? RequestBuffer::ReadWrite
                                       : RequestBuffer::Shared;
    // DRAMSys reads every size whatever the organisation; the one it uses is RequestBufferSize
    // per bank (Bankwise) or per channel (Shared), or the read and write sizes (ReadWrite).
    auto size = [&](const char* key, std::uint32_t& out) {
        if (std::optional<std::uint64_t> n = s.optionalUnsigned(key))
            out = narrow(s, key, *n);
    };
    size("RequestBufferSize", c.bankBuffer);
    c.sharedBuffer = c.bankBuffer;
    size("RequestBufferSizeRead", c.readBuffer);
    size("RequestBufferSizeWrite", c.writeBuffer);
    s.choice("CmdMux", {"Oldest"}, "the strict mux is not modelled");
    c.commandMux = CommandMux::Oldest;
    s.choice("RespQueue", {"Fifo"}, "the reorder queue is not modelled");
    // DRAMSys's HBM2 memspec gives intervals for all-bank (REFI) and per-bank (REFISB)
    // refresh only; DRAMSys itself stops on Per2Bank or SameBank with an HBM2 memspec.
    std::string refresh = s.choice(
        "RefreshPolicy",
        {"AllBank", "Rankwise", "PerBank", "Bankwise", "NoRefresh"},
        "an HBM2 memspec defines no per-2-bank or same-bank refresh (DRAMSys refuses them too); "
        "use AllBank or PerBank");
    c.refresh = refresh == "AllBank" || refresh == "Rankwise"   ? RefreshKind::AllBank
                : refresh == "PerBank" || refresh == "Bankwise" ? RefreshKind::PerBank
                                                                : RefreshKind::None;
    c.refreshPrecharge = RefreshPrecharge::AllBank;
    c.refreshStart = RefreshStart::Staggered;
    auto flexibility = [&](const char* key, std::uint32_t& out) {
        if (std::optional<std::uint64_t> n = s.optionalUnsigned(key)) {
            if (*n > 8)
                s.fail(key,
                       std::to_string(*n) +
                           " is more than JEDEC allows (8 refresh intervals); use 0 to 8");
            out = static_cast<std::uint32_t>(*n);
        }
    };
    flexibility("RefreshMaxPostponed", c.refreshMaxPostponed);
    flexibility("RefreshMaxPulledin", c.refreshMaxPulledIn);
    if (std::optional<ParamViolation> bad = refreshProblem(c, config.timing, config.organisation))
        s.fail(bad->key == "refresh_max_postponed"   ? "RefreshMaxPostponed"
               : bad->key == "refresh_max_pulled_in" ? "RefreshMaxPulledin"
                                                     : "RefreshPolicy",
               bad->problem);
    s.onlyFlag("RefreshManagement", false, "refresh management (RFM)");
    s.choice("PowerDownPolicy", {"NoPowerDown"}, "power-down is not modelled");
    s.choice("Arbiter", {"Simple"}, "the FIFO and reorder arbiters are not modelled");
    c.admission = Admission::InOrder;
    // The simple arbiter forwards one request at a time per channel and never counts active
    // transactions: the limit only binds the FIFO and reorder arbiters.
    s.accept("MaxActiveTransactions");
    std::uint64_t think = s.optionalUnsigned("ThinkDelayFw").value_or(1);
    c.latency = Time::fromPs(static_cast<std::uint64_t>(
        std::llround(static_cast<double>(think) * 1e12 / config.organisation.clock.hz())));
    for (const char* zero : {"ThinkDelayBw",
                             "PhyDelayFw",
                             "PhyDelayBw",
                             "ArbitrationDelayFw",
                             "ArbitrationDelayBw",
                             "BlockingReadDelay",
                             "BlockingWriteDelay"})
        s.only(zero, 0, "delays other than ThinkDelayFw");
    s.finish();
    // One controller per channel, as DRAMSys instantiates it: the pseudo-channels share its
    // command buses, and ACT's timings count from its second cycle.
    c.commandBus = CommandBus::PerChannel;
    c.actTiming = ActTiming::SecondCycle;
    // The per-direction queues are unused by DRAMSys's buffers; they only need to be valid.
    c.readQueue = c.writeQueue = c.bankBuffer;
}

void readSimconfig(const Part& part)
{
    Section s(part.file, "simconfig", part.content);
    s.only("AddressOffset", 0, "address offsets");
    s.onlyFlag("PowerAnalysis", false, "power analysis");
    s.onlyFlag("ThermalSimulation", false, "thermal simulation");
    s.choice("StoreMode", {"NoStorage"}, "etsim models timing, not data");
    // Recording, windowed statistics, progress output and the power-only toggling rates
    // change no timing.
    for (const char* key : {"DatabaseRecording",
                            "Debug",
                            "EnableWindowing",
                            "WindowSize",
                            "SimulationName",
                            "SimulationProgressBar",
                            "TogglingRate",
                            "CheckTLM2Protocol",
                            "UseMalloc"})
        s.accept(key);
    s.finish();
}

DramsysInitiator readInitiator(Section& simulation, const fs::path& folder)
{
    const json& list = simulation.at("tracesetup");
    if (!list.is_array() || list.size() != 1)
        simulation.fail("tracesetup",
                        "etsim drives one initiator; give a list of exactly one generator or "
                        "player");
    Section s(simulation.fileName(), "simulation.tracesetup[0]", list.at(0));
    DramsysInitiator init;
    std::string type = s.has("type") ? s.text("type") : "player";
    std::uint64_t mhz = s.unsignedValue("clkMhz");
    if (mhz == 0)
        s.fail("clkMhz", "must be positive");
    init.clock = Frequency::fromHz(static_cast<double>(mhz) * 1e6);
    init.name = s.text("name");
    init.dataLength = s.unsignedValue("dataLength");
    if (init.dataLength == 0 || (init.dataLength & (init.dataLength - 1)) != 0)
        s.fail("dataLength",
               "must be a power of two (DRAMSys requires naturally aligned "
               "requests)");
    std::optional<std::uint64_t> reads = s.optionalUnsigned("maxPendingReadRequests");
    std::optional<std::uint64_t> writes = s.optionalUnsigned("maxPendingWriteRequests");
    if (reads && writes && *reads != *writes)
        s.fail("maxPendingWriteRequests",
               "separate read and write limits are not modelled by etsim; give equal limits");
    if (std::optional<std::uint64_t> limit = reads ? reads : writes)
        init.maxPending =
            narrow(s, reads ? "maxPendingReadRequests" : "maxPendingWriteRequests", *limit);
    if (type == "player") {
        init.kind = DramsysInitiator::Kind::Player;
        init.name = (folder / init.name).string();
    } else if (type == "generator") {
        init.kind = DramsysInitiator::Kind::Generator;
        init.numRequests = s.unsignedValue("numRequests");
        init.rwRatio = s.number("rwRatio");
        std::string distribution = s.text("addressDistribution");
        if (distribution != "sequential" && distribution != "random")
            s.fail("addressDistribution", "supported: sequential, random");
        init.random = distribution == "random";
        init.seed = s.optionalUnsigned("seed").value_or(0);
        init.addressIncrement = s.optionalUnsigned("addressIncrement").value_or(0);
        init.minAddress = s.optionalUnsigned("minAddress");
        init.maxAddress = s.optionalUnsigned("maxAddress");
        init.dataAlignment = s.optionalUnsigned("dataAlignment").value_or(0);
        if (s.has("maxTransactions"))
            s.fail("maxTransactions", "not modelled by etsim; use numRequests");
    } else {
        s.fail("type", "\"" + type + "\" is not modelled by etsim; supported: generator, player");
    }
    s.finish();
    return init;
}

} // namespace

DramsysSimulation loadDramsysSimulation(const std::string& path, bool needTraffic)
{
    json whole = readJson(path);
    if (!whole.is_object() || !whole.contains("simulation"))
        throw Error(path + ": must hold an object under \"simulation\"");
    Section top(path, "", whole);
    Section simulation(path, "simulation", top.at("simulation"));
    top.finish();
    fs::path folder = fs::path(path).parent_path();

    DramsysSimulation out;
    out.config = hbmPreset(HbmPreset::Hbm2);
    out.config.presetName = "dramsys";
    out.config.fidelity = Fidelity::Detailed;
    out.simulationId = simulation.has("simulationid") ? simulation.text("simulationid") : "";
    readMemspec(loadPart(simulation, "memspec", folder), out.config);
    readAddressMapping(loadPart(simulation, "addressmapping", folder), out.config);
    readMcconfig(loadPart(simulation, "mcconfig", folder), out.config);
    readSimconfig(loadPart(simulation, "simconfig", folder));
    if (needTraffic || simulation.has("tracesetup"))
        out.initiator = readInitiator(simulation, folder);
    simulation.finish();
    try {
        validate(out.config);
    } catch (const Error& error) {
        throw Error(path +
                    ": the configuration it describes is not valid for etsim: " + error.what());
    }
    return out;
}

DramsysGenerator::DramsysGenerator(const DramsysInitiator& initiator, std::uint64_t capacity)
    : spec(initiator)
    , increment(initiator.addressIncrement != 0 ? initiator.addressIncrement : initiator.dataLength)
    , alignment(initiator.dataAlignment != 0 ? initiator.dataAlignment : initiator.dataLength)
    , engine(static_cast<std::default_random_engine::result_type>(initiator.seed))
{
    minAddress = spec.minAddress.value_or(0);
    // DRAMSys's defaults: sequential wraps below the capacity, random draws up to the last
    // whole request.
    maxAddress = spec.maxAddress.value_or(spec.random ? capacity - spec.dataLength : capacity - 1);
    if (minAddress > capacity - 1 || maxAddress > capacity - 1)
        throw Error("tracesetup " + spec.name +
                    ": minAddress and maxAddress must be below the "
                    "memory size " +
                    std::to_string(capacity));
    if (maxAddress < minAddress || (!spec.random && maxAddress == minAddress))
        throw Error("tracesetup " + spec.name + ": maxAddress must be above minAddress");
    address = std::uniform_int_distribution<std::uint64_t>(minAddress, maxAddress);
}

bool DramsysGenerator::next(MemRequest& request)
{
    if (generated == spec.numRequests)
        return false;
    std::uint64_t at;
    if (spec.random) {
        at = address(engine);
        at -= at % alignment;
    } else {
        at = generated * increment % (maxAddress - minAddress) + minAddress;
    }
    bool read = direction(engine) < std::clamp(spec.rwRatio, 0.0, 1.0);
    request.address = at;
    request.bytes = spec.dataLength;
    request.write = !read;
    request.notBeforePs = static_cast<std::uint64_t>(
        std::llround(static_cast<double>(generated) * 1e12 / spec.clock.hz()));
    ++generated;
    return true;
}

} // namespace etsim::hbm
