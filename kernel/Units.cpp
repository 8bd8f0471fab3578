// Longer than most files (about 1,000 lines): every unit type (time, size, bandwidth,
// frequency, rates) shares one exact decimal parser, one table of unit names and one printer,
// so each quantity reads back to the same value; the types' arithmetic is checked here too.
#include "kernel/Units.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <ostream>
#include <vector>

namespace etsim {

namespace {

// Exact arithmetic for times and sizes: a 20-digit mantissa times 2^40 or 10^20 does not fit
// 64 bits, but fits 128.
__extension__ using Uint128 = unsigned __int128;

constexpr std::uint64_t maxUint64 = std::numeric_limits<std::uint64_t>::max();

enum class Kind { Time, Frequency, Bandwidth, Size, FlopRate };

struct KindInfo {
    Kind kind;
    const char* name;    // "a <name> was expected"
    const char* example; // shown when the text is not a number at all
};

constexpr std::array<KindInfo, 5> kinds{{
    {Kind::Time, Time::kindName, "700 ns"},
    {Kind::Frequency, Frequency::kindName, "1.98 GHz"},
    {Kind::Bandwidth, Bandwidth::kindName, "900 GB/s"},
    {Kind::Size, Size::kindName, "80 GiB"},
    {Kind::FlopRate, FlopRate::kindName, "989 TFLOP/s"},
}};

const KindInfo& infoOf(Kind kind)
{
    return kinds[static_cast<std::size_t>(kind)];
}

// One accepted spelling. The value in base units (ps, Hz, B/s, B, FLOP/s) is
// number * 10^pow10 * 2^pow2; `factor` is the same as a double for the floating kinds.
// Unlisted spellings are aliases: accepted and suggested, but not named in "expected one of".
struct UnitSpec {
    std::string_view name;
    Kind kind;
    int pow10;
    int pow2;
    double factor;
    bool listed;
};

constexpr std::array<UnitSpec, 66> unitTable{{
    {"ps", Kind::Time, 0, 0, 1.0, true},
    {"ns", Kind::Time, 3, 0, 1e3, true},
    {"us", Kind::Time, 6, 0, 1e6, true},
    {"\xC2\xB5s", Kind::Time, 6, 0, 1e6, false}, // U+00B5 MICRO SIGN
    {"\xCE\xBCs", Kind::Time, 6, 0, 1e6, false}, // U+03BC GREEK SMALL LETTER MU
    {"ms", Kind::Time, 9, 0, 1e9, true},
    {"s", Kind::Time, 12, 0, 1e12, true},

    {"Hz", Kind::Frequency, 0, 0, 1.0, true},
    {"kHz", Kind::Frequency, 3, 0, 1e3, true},
    {"MHz", Kind::Frequency, 6, 0, 1e6, true},
    {"GHz", Kind::Frequency, 9, 0, 1e9, true},

    // Bytes first: a case-insensitive match ("gb/s") then suggests bytes, the common case.
    {"B/s", Kind::Bandwidth, 0, 0, 1.0, true},
    {"KB/s", Kind::Bandwidth, 3, 0, 1e3, true},
    {"kB/s", Kind::Bandwidth, 3, 0, 1e3, false},
    {"MB/s", Kind::Bandwidth, 6, 0, 1e6, true},
    {"GB/s", Kind::Bandwidth, 9, 0, 1e9, true},
    {"TB/s", Kind::Bandwidth, 12, 0, 1e12, true},
    {"KiB/s", Kind::Bandwidth, 0, 10, 1024.0, true},
    {"MiB/s", Kind::Bandwidth, 0, 20, 1048576.0, true},
    {"GiB/s", Kind::Bandwidth, 0, 30, 1073741824.0, true},
    {"TiB/s", Kind::Bandwidth, 0, 40, 1099511627776.0, true},
    {"bps", Kind::Bandwidth, 0, -3, 0.125, true},
    {"Kbps", Kind::Bandwidth, 3, -3, 125.0, true},
    {"kbps", Kind::Bandwidth, 3, -3, 125.0, false},
    {"Mbps", Kind::Bandwidth, 6, -3, 125e3, true},
    {"Gbps", Kind::Bandwidth, 9, -3, 125e6, true},
    {"Tbps", Kind::Bandwidth, 12, -3, 125e9, true},
    {"b/s", Kind::Bandwidth, 0, -3, 0.125, true},
    {"Kb/s", Kind::Bandwidth, 3, -3, 125.0, true},
    {"kb/s", Kind::Bandwidth, 3, -3, 125.0, false},
    {"Mb/s", Kind::Bandwidth, 6, -3, 125e3, true},
    {"Gb/s", Kind::Bandwidth, 9, -3, 125e6, true},
    {"Tb/s", Kind::Bandwidth, 12, -3, 125e9, true},
    {"bit/s", Kind::Bandwidth, 0, -3, 0.125, false},
    {"Kbit/s", Kind::Bandwidth, 3, -3, 125.0, false},
    {"kbit/s", Kind::Bandwidth, 3, -3, 125.0, false},
    {"Mbit/s", Kind::Bandwidth, 6, -3, 125e3, false},
    {"Gbit/s", Kind::Bandwidth, 9, -3, 125e6, false},
    {"Tbit/s", Kind::Bandwidth, 12, -3, 125e9, false},

    {"B", Kind::Size, 0, 0, 1.0, true},
    {"KB", Kind::Size, 3, 0, 1e3, true},
    {"kB", Kind::Size, 3, 0, 1e3, false},
    {"MB", Kind::Size, 6, 0, 1e6, true},
    {"GB", Kind::Size, 9, 0, 1e9, true},
    {"TB", Kind::Size, 12, 0, 1e12, true},
    {"KiB", Kind::Size, 0, 10, 1024.0, true},
    {"MiB", Kind::Size, 0, 20, 1048576.0, true},
    {"GiB", Kind::Size, 0, 30, 1073741824.0, true},
    {"TiB", Kind::Size, 0, 40, 1099511627776.0, true},

    {"FLOP/s", Kind::FlopRate, 0, 0, 1.0, true},
    {"KFLOP/s", Kind::FlopRate, 3, 0, 1e3, true},
    {"kFLOP/s", Kind::FlopRate, 3, 0, 1e3, false},
    {"MFLOP/s", Kind::FlopRate, 6, 0, 1e6, true},
    {"GFLOP/s", Kind::FlopRate, 9, 0, 1e9, true},
    {"TFLOP/s", Kind::FlopRate, 12, 0, 1e12, true},
    {"PFLOP/s", Kind::FlopRate, 15, 0, 1e15, true},
    {"FLOPS", Kind::FlopRate, 0, 0, 1.0, false},
    {"KFLOPS", Kind::FlopRate, 3, 0, 1e3, false},
    {"kFLOPS", Kind::FlopRate, 3, 0, 1e3, false},
    {"MFLOPS", Kind::FlopRate, 6, 0, 1e6, false},
    {"GFLOPS", Kind::FlopRate, 9, 0, 1e9, false},
    {"TFLOPS", Kind::FlopRate, 12, 0, 1e12, false},
    {"PFLOPS", Kind::FlopRate, 15, 0, 1e15, false},
    // Flop/s and flops are common in papers; both differ from FLOP/s only in case and would
    // be suggested anyway, but accepting them keeps copy-pasted figures working.
    {"Flop/s", Kind::FlopRate, 0, 0, 1.0, false},
    {"flop/s", Kind::FlopRate, 0, 0, 1.0, false},
}};

const UnitSpec* findUnit(std::string_view name)
{
    for (const UnitSpec& unit : unitTable)
        if (unit.name == name)
            return &unit;
    return nullptr;
}

// Units printing chooses from, largest first: one spelling per factor, decimal prefixes.
struct PrintUnit {
    const char* name;
    double factor;
};
constexpr std::array<PrintUnit, 4> frequencyPrintUnits{{
    {"GHz", 1e9},
    {"MHz", 1e6},
    {"kHz", 1e3},
    {"Hz", 1.0},
}};
constexpr std::array<PrintUnit, 5> bandwidthPrintUnits{{
    {"TB/s", 1e12},
    {"GB/s", 1e9},
    {"MB/s", 1e6},
    {"KB/s", 1e3},
    {"B/s", 1.0},
}};
constexpr std::array<PrintUnit, 6> flopRatePrintUnits{{
    {"PFLOP/s", 1e15},
    {"TFLOP/s", 1e12},
    {"GFLOP/s", 1e9},
    {"MFLOP/s", 1e6},
    {"KFLOP/s", 1e3},
    {"FLOP/s", 1.0},
}};

std::string quote(std::string_view text)
{
    std::string quoted;
    quoted.reserve(text.size() + 2);
    quoted += '"';
    quoted += text;
    quoted += '"';
    return quoted;
}

std::string expectedUnits(Kind kind)
{
    std::string list;
    for (const UnitSpec& unit : unitTable) {
        if (unit.kind != kind || !unit.listed)
            continue;
        if (!list.empty())
            list += ", ";
        list += unit.name;
    }
    return list;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b)
{
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i]))
            return false;
    return true;
}

std::size_t editDistance(std::string_view a, std::string_view b)
{
    // Levenshtein distance over bytes, one row at a time.
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j)
        row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t above = row[j];
            std::size_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            row[j] = std::min({above + 1, row[j - 1] + 1, substitute});
            diagonal = above;
        }
    }
    return row[b.size()];
}

// The accepted unit of `kind` nearest to `written`: a case-insensitive match first, else the
// smallest edit distance, if it is at most 2 and at most half the longer spelling (so "ps" is
// not offered for "B"). nullptr if nothing is near enough.
const UnitSpec* nearestUnit(std::string_view written, Kind kind)
{
    for (const UnitSpec& unit : unitTable)
        if (unit.kind == kind && equalsIgnoreCase(unit.name, written))
            return &unit;
    const UnitSpec* best = nullptr;
    std::size_t bestDistance = 3;
    for (const UnitSpec& unit : unitTable) {
        if (unit.kind != kind)
            continue;
        std::size_t distance = editDistance(written, unit.name);
        if (distance < bestDistance && distance * 2 <= std::max(written.size(), unit.name.size())) {
            best = &unit;
            bestDistance = distance;
        }
    }
    return best;
}

std::string suggestion(std::string_view written, Kind kind)
{
    const UnitSpec* near = nearestUnit(written, kind);
    return near == nullptr ? std::string() : " (did you mean " + quote(near->name) + "?)";
}

[[noreturn]] void fail(std::string_view text, const std::string& problem)
{
    throw UnitError(quote(text) + ": " + problem);
}

bool isSpace(char c)
{
    return c == ' ' || c == '\t';
}

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view text)
{
    while (!text.empty() && isSpace(text.front()))
        text.remove_prefix(1);
    while (!text.empty() && isSpace(text.back()))
        text.remove_suffix(1);
    return text;
}

// A decimal number read exactly: mantissa * 10^exponent. Only the first 20 significant digits
// are kept (enough for any uint64); `inexact` records that a dropped digit was not zero.
struct Decimal {
    Uint128 mantissa = 0;
    int exponent = 0;
    int digits = 0; // significant digits in the mantissa
    bool inexact = false;
    int firstDropped = 0; // the first digit not kept, which decides rounding at the units place
};

constexpr int keptDigits = 20;
constexpr int exponentLimit = 100000; // beyond this any value is 0 or out of range anyway

struct Scanned {
    std::string_view number; // the number as written, sign included
    std::string_view unit;
    bool negative = false;
    Decimal decimal;
};

// Splits "<number><spaces><unit>" and reads the number. Throws for an empty text, a missing
// number or a missing unit, naming what `kind` expects.
Scanned scan(std::string_view original, Kind kind)
{
    std::string_view text = trim(original);
    const KindInfo& info = infoOf(kind);
    if (text.empty())
        fail(original,
             std::string("empty, expected a ") + info.name + " such as " + quote(info.example));
    Scanned out;
    std::size_t pos = 0;
    if (text[pos] == '+' || text[pos] == '-') {
        out.negative = text[pos] == '-';
        ++pos;
    }
    std::size_t mantissaDigits = 0;
    bool seenPoint = false;
    bool dropped = false;
    Decimal& decimal = out.decimal;
    for (; pos < text.size(); ++pos) {
        char c = text[pos];
        if (c == '.' && !seenPoint) {
            seenPoint = true;
            continue;
        }
        if (!isDigit(c))
            break;
        ++mantissaDigits;
        int digit = c - '0';
        if (decimal.digits == 0 && digit == 0) {
            // Leading zeros carry no information, but after the point they scale the value.
            if (seenPoint)
                --decimal.exponent;
            continue;
        }
        if (decimal.digits < keptDigits) {
            decimal.mantissa = decimal.mantissa * 10 + static_cast<unsigned>(digit);
            ++decimal.digits;
            if (seenPoint)
                --decimal.exponent;
        } else {
            if (!dropped)
                decimal.firstDropped = digit;
            dropped = true;
            decimal.inexact = decimal.inexact || digit != 0;
            if (!seenPoint)
                ++decimal.exponent;
        }
    }
    if (mantissaDigits == 0)
        fail(original,
             std::string("not a number, expected a ") + info.name + " such as " +
                 quote(info.example));
    // An exponent needs at least one digit; otherwise the 'e' belongs to the unit.
    if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
        std::size_t look = pos + 1;
        bool exponentNegative = false;
        if (look < text.size() && (text[look] == '+' || text[look] == '-')) {
            exponentNegative = text[look] == '-';
            ++look;
        }
        if (look < text.size() && isDigit(text[look])) {
            int exponent = 0;
            for (; look < text.size() && isDigit(text[look]); ++look)
                exponent = std::min(exponent * 10 + (text[look] - '0'), exponentLimit);
            decimal.exponent += exponentNegative ? -exponent : exponent;
            pos = look;
        }
    }
    out.number = text.substr(0, pos);
    std::size_t unitStart = pos;
    while (unitStart < text.size() && isSpace(text[unitStart]))
        ++unitStart;
    out.unit = text.substr(unitStart);
    if (out.unit.empty())
        fail(original, "missing unit, expected one of " + expectedUnits(kind));
    return out;
}

// Finds the unit of `scanned` and checks it is of `kind` and that the value is not negative.
const UnitSpec& resolveUnit(std::string_view original, const Scanned& scanned, Kind kind)
{
    const UnitSpec* unit = nullptr;
    for (const UnitSpec& candidate : unitTable)
        if (candidate.kind == kind && candidate.name == scanned.unit) {
            unit = &candidate;
            break;
        }
    if (unit == nullptr) {
        const UnitSpec* other = findUnit(scanned.unit);
        if (other != nullptr)
            throw UnitError(quote(original) + " is a " + infoOf(other->kind).name + ", a " +
                            infoOf(kind).name + " was expected" + suggestion(scanned.unit, kind));
        std::string hint = suggestion(scanned.unit, kind);
        fail(original,
             "unknown unit " + quote(scanned.unit) +
                 (hint.empty() ? ", expected one of " + expectedUnits(kind) : hint));
    }
    if (scanned.negative)
        fail(original, std::string("negative, a ") + infoOf(kind).name + " cannot be negative");
    return *unit;
}

enum class Fraction { None, BelowHalf, Half, AboveHalf };

struct Whole {
    std::uint64_t value = 0;
    Fraction fraction = Fraction::None;
    bool overflow = false;
};

bool multiplyChecked(Uint128& value, Uint128 factor)
{
    if (factor != 0 && value > std::numeric_limits<Uint128>::max() / factor)
        return false;
    value *= factor;
    return true;
}

bool multiplyPower(Uint128& value, unsigned base, int exponent)
{
    for (int i = 0; i < exponent; ++i)
        if (!multiplyChecked(value, base))
            return false;
    return true;
}

// decimal * 10^pow10 * 2^pow2 as a whole number plus the kind of fraction left over, exactly.
Whole toWhole(const Decimal& decimal, int pow10, int pow2)
{
    Whole out;
    if (decimal.mantissa == 0)
        return out;
    int exponent = decimal.exponent + pow10;
    // Bound the magnitude first so the exact arithmetic below stays within 128 bits. The value
    // lies in [10^(digits-1+exponent) * 2^pow2, 10^(digits+exponent) * 2^pow2); 0.3 and 0.31
    // bracket log10(2).
    int lowerLog10 = decimal.digits - 1 + exponent + (pow2 * 3) / 10;
    int upperLog10 = decimal.digits + exponent + (pow2 * 31 + 99) / 100;
    if (lowerLog10 >= 20) {
        out.overflow = true;
        return out;
    }
    if (upperLog10 <= -1) {
        out.fraction = Fraction::BelowHalf;
        return out;
    }
    // value = mantissa * 2^(exponent + pow2) * 5^exponent, split into numerator/denominator.
    int twos = exponent + pow2;
    int fives = exponent;
    Uint128 numerator = decimal.mantissa;
    Uint128 denominator = 1;
    if (!multiplyPower(twos >= 0 ? numerator : denominator, 2, twos >= 0 ? twos : -twos) ||
        !multiplyPower(fives >= 0 ? numerator : denominator, 5, fives >= 0 ? fives : -fives)) {
        out.overflow = true;
        return out;
    }
    Uint128 quotient = numerator / denominator;
    Uint128 remainder = numerator % denominator;
    if (quotient > maxUint64) {
        out.overflow = true;
        return out;
    }
    out.value = static_cast<std::uint64_t>(quotient);
    Uint128 twice = remainder * 2;
    if (remainder == 0 && decimal.inexact && denominator == 1)
        // Only possible when the last kept digit is the units digit (any higher and the value
        // would have overflowed), so the first dropped digit is the first fraction digit.
        out.fraction = decimal.firstDropped >= 5 ? Fraction::AboveHalf : Fraction::BelowHalf;
    else if (remainder == 0)
        out.fraction = decimal.inexact ? Fraction::BelowHalf : Fraction::None;
    else if (twice < denominator)
        out.fraction = Fraction::BelowHalf;
    else if (twice == denominator)
        out.fraction = decimal.inexact ? Fraction::AboveHalf : Fraction::Half;
    else
        out.fraction = Fraction::AboveHalf;
    return out;
}

double parseRate(std::string_view text, Kind kind)
{
    Scanned scanned = scan(text, kind);
    const UnitSpec& unit = resolveUnit(text, scanned, kind);
    std::string_view digits = scanned.number;
    if (!digits.empty() && digits.front() == '+')
        digits.remove_prefix(1);
    double number = 0.0;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
    bool tiny = scanned.decimal.digits + scanned.decimal.exponent <= 0;
    if (error == std::errc::result_out_of_range && tiny)
        number = 0.0; // below the smallest double: as good as zero for any rate
    else if (error != std::errc() || end != digits.data() + digits.size())
        fail(text, std::string("too large for a ") + infoOf(kind).name);
    double value = number * unit.factor;
    if (std::isinf(value))
        fail(text, std::string("too large for a ") + infoOf(kind).name);
    return value;
}

// Appends `value` with the shortest digits that read back as the same double.
void appendNumber(std::string& out, double value)
{
    std::array<char, 64> buffer{};
    double magnitude = std::fabs(value);
    bool plain = magnitude == 0.0 || (magnitude >= 1e-4 && magnitude < 1e16);
    auto [end, error] =
        plain ? std::to_chars(
                    buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed)
              : std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    out.append(buffer.data(), error == std::errc() ? end : buffer.data());
}

template <std::size_t N>
std::string printRate(double value, const std::array<PrintUnit, N>& printUnits)
{
    const PrintUnit& base = printUnits.back();
    const PrintUnit* chosen = &base;
    for (const PrintUnit& unit : printUnits)
        if (value >= unit.factor) {
            chosen = &unit;
            break;
        }
    std::string out;
    out.reserve(24);
    if (chosen != &base) {
        appendNumber(out, value / chosen->factor);
        // Parsing multiplies by the factor; keep this form only if that gives `value` back.
        double reread = 0.0;
        std::from_chars(out.data(), out.data() + out.size(), reread);
        if (reread * chosen->factor != value) {
            out.clear();
            chosen = &base;
        }
    }
    if (chosen == &base)
        appendNumber(out, value);
    out += ' ';
    out += chosen->name;
    return out;
}

// Appends integer `whole` and the exact decimal fraction numerator / 10^digits, trailing
// zeros dropped. Returns the number of digits written.
std::size_t
appendDecimalFraction(std::string& out, std::uint64_t whole, std::uint64_t numerator, int digits)
{
    std::array<char, 24> buffer{};
    auto* end = std::to_chars(buffer.data(), buffer.data() + buffer.size(), whole).ptr;
    out.append(buffer.data(), end);
    auto written = static_cast<std::size_t>(end - buffer.data());
    if (numerator == 0)
        return written;
    std::array<char, 24> fraction{};
    for (int i = digits - 1; i >= 0; --i) {
        fraction[static_cast<std::size_t>(i)] = static_cast<char>('0' + numerator % 10);
        numerator /= 10;
    }
    int used = digits;
    while (used > 0 && fraction[static_cast<std::size_t>(used - 1)] == '0')
        --used;
    out += '.';
    out.append(fraction.data(), static_cast<std::size_t>(used));
    return written + static_cast<std::size_t>(used);
}

// Appends integer `whole` and the exact binary fraction numerator / 2^bits.
std::size_t
appendBinaryFraction(std::string& out, std::uint64_t whole, std::uint64_t numerator, int bits)
{
    std::array<char, 24> buffer{};
    auto* end = std::to_chars(buffer.data(), buffer.data() + buffer.size(), whole).ptr;
    out.append(buffer.data(), end);
    auto written = static_cast<std::size_t>(end - buffer.data());
    if (numerator == 0)
        return written;
    // numerator < 2^bits <= 2^40, so numerator * 10 cannot overflow; a dyadic fraction ends
    // after at most `bits` digits.
    out += '.';
    std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
    while (numerator != 0) {
        numerator *= 10;
        out += static_cast<char>('0' + (numerator >> bits));
        numerator &= mask;
        ++written;
    }
    return written;
}

constexpr std::array<std::uint64_t, 5> powersOf1000{1, 1000, 1000000, 1000000000, 1000000000000};

constexpr std::array<const char*, 5> timePrintUnits{"ps", "ns", "us", "ms", "s"};
constexpr std::array<const char*, 5> decimalSizeUnits{"B", "KB", "MB", "GB", "TB"};
constexpr std::array<const char*, 5> binarySizeUnits{"B", "KiB", "MiB", "GiB", "TiB"};

std::size_t largestStep(std::uint64_t value)
{
    std::size_t step = powersOf1000.size() - 1;
    while (step > 0 && value < powersOf1000[step])
        --step;
    return step;
}

// Rounds a non-negative picosecond count to a Time; `describe` builds the message if the
// result is out of range.
template <typename Describe>
Time roundToTime(long double ps, Describe describe)
{
    long double rounded = std::floor(ps + 0.5L);
    if (!(rounded < 18446744073709551616.0L))
        throw UnitError(describe() + " exceeds the largest time, " +
                        toString(Time::fromPs(maxUint64)));
    return Time::fromPs(static_cast<std::uint64_t>(rounded));
}

std::string describeCount(long double count)
{
    std::string out;
    appendNumber(out, static_cast<double>(count));
    return out;
}

// Throws unless a double quantity is finite and not negative; `what` names it.
void checkRate(double value, const char* what)
{
    if (!(value >= 0.0) || std::isinf(value)) {
        std::string number;
        appendNumber(number, value);
        if (std::isnan(value))
            number = "NaN";
        throw UnitError(std::string(what) + " of " + number +
                        " is not allowed: it must be finite and not negative");
    }
}

} // namespace

namespace units {

void checkCount(long long count, const char* what)
{
    if (count < 0)
        throw UnitError(std::string("cannot multiply ") + what + " by the negative count " +
                        std::to_string(count));
}

} // namespace units

// ---- Time -------------------------------------------------------------------------------

Time Time::parse(std::string_view text)
{
    Scanned scanned = scan(text, Kind::Time);
    const UnitSpec& unit = resolveUnit(text, scanned, Kind::Time);
    Whole whole = toWhole(scanned.decimal, unit.pow10, unit.pow2);
    bool roundUp = whole.fraction == Fraction::Half || whole.fraction == Fraction::AboveHalf;
    if (whole.overflow || (roundUp && whole.value == maxUint64))
        fail(text, "too large, a time must be at most " + toString(Time(maxUint64)));
    return Time(whole.value + (roundUp ? 1 : 0));
}

// ---- Checked arithmetic of whole counts ------------------------------------------------
//
// Time and Size are both whole counts of one unit (ps, bytes) in a uint64; their sums,
// differences and multiples are checked by the same rules and reported in the same words.

namespace {

template <class Quantity>
struct WholeCount;

template <>
struct WholeCount<Time> {
    static constexpr const char* noun = "time";
    static std::uint64_t count(Time time) { return time.ps(); }
    static Time make(std::uint64_t ps) { return Time::fromPs(ps); }
};

template <>
struct WholeCount<Size> {
    static constexpr const char* noun = "size";
    static std::uint64_t count(Size size) { return size.bytes(); }
    static Size make(std::uint64_t bytes) { return Size::fromBytes(bytes); }
};

template <class Quantity>
std::string largest()
{
    return std::string(" exceeds the largest ") + WholeCount<Quantity>::noun + ", " +
           toString(WholeCount<Quantity>::make(maxUint64));
}

template <class Quantity>
Quantity checkedAdd(Quantity a, Quantity b)
{
    using W = WholeCount<Quantity>;
    std::uint64_t sum = 0;
    if (__builtin_add_overflow(W::count(a), W::count(b), &sum))
        throw UnitError(toString(a) + " + " + toString(b) + largest<Quantity>());
    return W::make(sum);
}

template <class Quantity>
Quantity checkedSubtract(Quantity a, Quantity b)
{
    using W = WholeCount<Quantity>;
    if (W::count(b) > W::count(a))
        throw UnitError("cannot subtract " + toString(b) + " from " + toString(a) + ": a " +
                        W::noun + " cannot be negative");
    return W::make(W::count(a) - W::count(b));
}

template <class Quantity>
Quantity checkedMultiply(Quantity quantity, unsigned long long count)
{
    using W = WholeCount<Quantity>;
    std::uint64_t product = 0;
    if (__builtin_mul_overflow(W::count(quantity), count, &product))
        throw UnitError(toString(quantity) + " * " + std::to_string(count) + largest<Quantity>());
    return W::make(product);
}

} // namespace

namespace units {

void throwTimeSumBeyondRange(Time a, Time b)
{
    // Called only when the sum passes 2^64 - 1 ps, so checkedAdd throws its message.
    checkedAdd(a, b);
    throw UnitError(toString(a) + " + " + toString(b) + ": out of range");
}

void throwTimeDifferenceNegative(Time a, Time b)
{
    // Called only when b > a, so checkedSubtract throws its message.
    checkedSubtract(a, b);
    throw UnitError(toString(a) + " - " + toString(b) + ": out of range");
}

} // namespace units

double operator/(Time a, Time b)
{
    if (b.ps() == 0)
        throw UnitError("cannot divide " + toString(a) + " by a zero time");
    return static_cast<double>(a.ps()) / static_cast<double>(b.ps());
}

Time multiply(Time time, unsigned long long count)
{
    return checkedMultiply(time, count);
}

std::string toString(Time time)
{
    std::uint64_t ps = time.ps();
    std::size_t step = ps == 0 ? 0 : largestStep(ps);
    std::uint64_t scale = powersOf1000[step];
    std::string out;
    out.reserve(24);
    appendDecimalFraction(out, ps / scale, ps % scale, static_cast<int>(step * 3));
    out += ' ';
    out += timePrintUnits[step];
    return out;
}

// ---- Size -------------------------------------------------------------------------------

Size Size::parse(std::string_view text)
{
    Scanned scanned = scan(text, Kind::Size);
    const UnitSpec& unit = resolveUnit(text, scanned, Kind::Size);
    Whole whole = toWhole(scanned.decimal, unit.pow10, unit.pow2);
    if (whole.overflow)
        fail(text, "too large, a size must be at most " + toString(Size(maxUint64)));
    if (scanned.decimal.inexact)
        fail(text,
             "too many significant digits, a size is read exactly to " +
                 std::to_string(keptDigits) + " digits");
    if (whole.fraction != Fraction::None)
        fail(text, "not a whole number of bytes (sizes are counted in whole bytes)");
    return Size(whole.value);
}

Size& Size::operator+=(Size other)
{
    return *this = *this + other;
}

Size& Size::operator-=(Size other)
{
    return *this = *this - other;
}

Size operator+(Size a, Size b)
{
    return checkedAdd(a, b);
}

Size operator-(Size a, Size b)
{
    return checkedSubtract(a, b);
}

Size multiply(Size size, unsigned long long count)
{
    return checkedMultiply(size, count);
}

std::string toString(Size size)
{
    std::uint64_t bytes = size.bytes();
    std::size_t decimalStep = bytes == 0 ? 0 : largestStep(bytes);
    std::size_t binaryStep = 0;
    while (binaryStep + 1 < binarySizeUnits.size() && bytes >> (10 * (binaryStep + 1)) != 0)
        ++binaryStep;

    std::string decimal;
    decimal.reserve(32);
    std::uint64_t scale = powersOf1000[decimalStep];
    std::size_t decimalDigits = appendDecimalFraction(
        decimal, bytes / scale, bytes % scale, static_cast<int>(decimalStep * 3));
    if (binaryStep != 0) {
        // Fewer digits wins; a tie goes to decimal, the datasheet default.
        int bits = static_cast<int>(binaryStep * 10);
        std::string binary;
        binary.reserve(48);
        std::size_t binaryDigits = appendBinaryFraction(
            binary, bytes >> bits, bytes & ((std::uint64_t{1} << bits) - 1), bits);
        if (binaryDigits < decimalDigits) {
            binary += ' ';
            binary += binarySizeUnits[binaryStep];
            return binary;
        }
    }
    decimal += ' ';
    decimal += decimalSizeUnits[decimalStep];
    return decimal;
}

// ---- Frequency --------------------------------------------------------------------------

Frequency Frequency::fromHz(double hz)
{
    checkRate(hz, "a frequency");
    return Frequency(hz);
}

Frequency Frequency::parse(std::string_view text)
{
    return Frequency(parseRate(text, Kind::Frequency));
}

Time Frequency::period() const
{
    if (value == 0.0)
        throw UnitError("a frequency of 0 Hz has no period");
    return roundToTime(1e12L / value, [this] { return "the period of " + toString(*this); });
}

Time operator/(std::uint64_t cycles, Frequency frequency)
{
    if (cycles == 0)
        return {};
    if (frequency.hz() == 0.0)
        throw UnitError("cannot convert " + std::to_string(cycles) + " cycles to a time at 0 Hz");
    return roundToTime(static_cast<long double>(cycles) * 1e12L / frequency.hz(), [&] {
        return std::to_string(cycles) + " cycles at " + toString(frequency);
    });
}

double operator*(Frequency frequency, Time time)
{
    return static_cast<double>(static_cast<long double>(frequency.hz()) * time.ps() / 1e12L);
}

double operator*(Time time, Frequency frequency)
{
    return frequency * time;
}

Frequency operator*(Frequency frequency, double factor)
{
    return Frequency::fromHz(frequency.hz() * factor);
}

std::string toString(Frequency frequency)
{
    return printRate(frequency.hz(), frequencyPrintUnits);
}

// ---- Bandwidth --------------------------------------------------------------------------

Bandwidth Bandwidth::fromBytesPerSecond(double bytesPerSecond)
{
    checkRate(bytesPerSecond, "a bandwidth");
    return Bandwidth(bytesPerSecond);
}

Bandwidth Bandwidth::parse(std::string_view text)
{
    return Bandwidth(parseRate(text, Kind::Bandwidth));
}

Time operator/(Size size, Bandwidth bandwidth)
{
    if (size.bytes() == 0)
        return {};
    if (bandwidth.bytesPerSecond() == 0.0)
        throw UnitError("cannot move " + toString(size) + " at 0 B/s");
    return roundToTime(static_cast<long double>(size.bytes()) * 1e12L / bandwidth.bytesPerSecond(),
                       [&] { return "moving " + toString(size) + " at " + toString(bandwidth); });
}

Bandwidth operator/(Size size, Time time)
{
    if (time.ps() == 0)
        throw UnitError("cannot compute the bandwidth of " + toString(size) + " in 0 ps");
    return Bandwidth::fromBytesPerSecond(
        static_cast<double>(static_cast<long double>(size.bytes()) * 1e12L / time.ps()));
}

Bandwidth operator+(Bandwidth a, Bandwidth b)
{
    return Bandwidth::fromBytesPerSecond(a.bytesPerSecond() + b.bytesPerSecond());
}

Bandwidth operator*(Bandwidth bandwidth, double factor)
{
    return Bandwidth::fromBytesPerSecond(bandwidth.bytesPerSecond() * factor);
}

std::string toString(Bandwidth bandwidth)
{
    return printRate(bandwidth.bytesPerSecond(), bandwidthPrintUnits);
}

// ---- FlopRate ---------------------------------------------------------------------------

FlopRate FlopRate::fromFlopsPerSecond(double flopsPerSecond)
{
    checkRate(flopsPerSecond, "a FLOP rate");
    return FlopRate(flopsPerSecond);
}

FlopRate FlopRate::parse(std::string_view text)
{
    return FlopRate(parseRate(text, Kind::FlopRate));
}

Time operator/(double flops, FlopRate rate)
{
    checkRate(flops, "a FLOP count");
    if (flops == 0.0)
        return {};
    if (rate.flopsPerSecond() == 0.0)
        throw UnitError("cannot run " + describeCount(flops) + " FLOP at 0 FLOP/s");
    return roundToTime(static_cast<long double>(flops) * 1e12L / rate.flopsPerSecond(),
                       [&] { return describeCount(flops) + " FLOP at " + toString(rate); });
}

FlopRate operator*(FlopRate rate, double factor)
{
    return FlopRate::fromFlopsPerSecond(rate.flopsPerSecond() * factor);
}

std::string toString(FlopRate rate)
{
    return printRate(rate.flopsPerSecond(), flopRatePrintUnits);
}

// ---- Rounded report text ------------------------------------------------------------------

std::string toRoundedString(Time time)
{
    char text[32];
    const std::uint64_t ps = time.ps();
    const double value = static_cast<double>(ps);
    if (ps >= 1000000000ULL)
        std::snprintf(text, sizeof text, "%.3f ms", value * 1e-9);
    else if (ps >= 1000000ULL)
        std::snprintf(text, sizeof text, "%.3f us", value * 1e-6);
    else
        std::snprintf(text, sizeof text, "%.3f ns", value * 1e-3);
    return text;
}

std::string toRoundedBytes(double bytes)
{
    char text[32];
    if (bytes >= 1e9)
        std::snprintf(text, sizeof text, "%.3f GB", bytes * 1e-9);
    else if (bytes >= 1e6)
        std::snprintf(text, sizeof text, "%.3f MB", bytes * 1e-6);
    else if (bytes >= 1e3)
        std::snprintf(text, sizeof text, "%.3f kB", bytes * 1e-3);
    else
        std::snprintf(text, sizeof text, "%.0f B", bytes);
    return text;
}

// ---- Streams ----------------------------------------------------------------------------

std::ostream& operator<<(std::ostream& out, Time time)
{
    return out << toString(time);
}

std::ostream& operator<<(std::ostream& out, Size size)
{
    return out << toString(size);
}

std::ostream& operator<<(std::ostream& out, Frequency frequency)
{
    return out << toString(frequency);
}

std::ostream& operator<<(std::ostream& out, Bandwidth bandwidth)
{
    return out << toString(bandwidth);
}

std::ostream& operator<<(std::ostream& out, FlopRate rate)
{
    return out << toString(rate);
}

} // namespace etsim
