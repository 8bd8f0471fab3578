#pragma once
// Physical quantities as strong types, parsed from and printed as datasheet text
// ("900 GB/s", "1.98 GHz", "700 ns", "80 GiB") so that platform files read like datasheets.
//
// Prefixes. K, M, G, T (and P for FLOP rates) are DECIMAL: K = 1e3, M = 1e6, G = 1e9,
// T = 1e12, P = 1e15, so "1 KB" is 1000 bytes and "900 GB/s" is 9e11 bytes per second.
// Ki, Mi, Gi, Ti are BINARY: Ki = 2^10, Mi = 2^20, Gi = 2^30, Ti = 2^40, so "1 KiB" is 1024
// bytes. A lower-case "k" is accepted where SI writes it ("kHz", "kB", "kbps"). Bit rates
// ("bps", "Gbps", "Gb/s", "Gbit/s") use the same decimal prefixes and are divided by 8.
//
// Accepted units, by kind:
//   time       ps, ns, us (also µs), ms, s
//   frequency  Hz, kHz, MHz, GHz
//   bandwidth  B/s, KB/s, MB/s, GB/s, TB/s; KiB/s, MiB/s, GiB/s, TiB/s;
//              bps, Kbps, Mbps, Gbps, Tbps; b/s, Kb/s, Mb/s, Gb/s, Tb/s; bit/s ... Tbit/s
//   size       B, KB, MB, GB, TB; KiB, MiB, GiB, TiB
//   FLOP rate  FLOP/s, KFLOP/s, MFLOP/s, GFLOP/s, TFLOP/s, PFLOP/s; FLOPS ... PFLOPS;
//              Flop/s, flop/s
//
// Text is "<number><optional spaces><unit>", with optional spaces around the whole. The number
// is decimal with an optional fraction and exponent ("1.98", "2e9", ".5", "7E-1"); it may
// carry a '+' sign. No quantity may be negative. Units are case-sensitive (b is a bit, B a
// byte); a wrong-case or misspelt unit is rejected with the nearest accepted spelling.
//
// Exactness. Time and Size are integers and are parsed with exact decimal arithmetic:
//   - a time is rounded to the nearest picosecond, halves away from zero ("0.5 ps" is 1 ps);
//   - a size must be a whole number of bytes: "1.5 KB" is 1500 B, but "1.5 B" and
//     "0.1 KiB" (102.4 B) are errors.
// The first 20 significant digits are kept exactly (any uint64 fits); further digits still
// decide the rounding of a time, but make a size an error ("too many significant digits").
// Frequency, Bandwidth and FlopRate are doubles; parsing multiplies the number by the unit's
// factor once, so "1.98 GHz" is the double nearest to 1.98e9.
//
// Printing picks one unit and prints the shortest number that parses back to exactly the same
// value: parse(toString(v)) == v for every v (tested over the whole range of each type).
//   - time: the largest of ps, ns, us, ms, s that leaves a number >= 1, printed exactly
//     ("700 ns", "1.5 us", "1234567 ps" is "1.234567 us");
//   - size: the largest decimal unit and the largest binary unit that leave a number >= 1
//     are both written exactly, and the one with fewer digits wins, decimal on a tie:
//     "80 GiB", "1 MB", "1.5 KiB" (1536 B), "1.5 KB" (1500 B), "1.024 MB" (1024000 B), "64 B";
//   - frequency, bandwidth, FLOP rate: the largest decimal unit that leaves a number >= 1
//     (bandwidth always in bytes per second: "100 Gbps" prints as "12.5 GB/s"); should the
//     scaled number not round-trip, the value is printed in the base unit instead;
//   - zero prints in the base unit: "0 ps", "0 B", "0 Hz", "0 B/s", "0 FLOP/s".
//
// Errors are etsim::UnitError whose message quotes the text and says what was expected, e.g.
//   "900 GBs": unknown unit "GBs" (did you mean "GB/s"?)
//   "3 GHz" is a frequency, a time was expected
// The caller (the config layer) prefixes the file and key path.
//
// Plain C++, no SystemC: conversions to and from sc_time are in kernel/ScTime.h.

#include "kernel/Error.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <type_traits>

namespace etsim {

namespace units {

// Throws UnitError for a negative count passed to an integer multiplication.
void checkCount(long long count, const char* what);

} // namespace units

// A duration or point in simulated time, held as a whole number of picoseconds (0 to
// 2^64 - 1 ps, about 213 days). Arithmetic that would leave that range throws UnitError.
class Time {
public:
    static constexpr const char* kindName = "time";

    constexpr Time() = default;
    /// A time of `ps` picoseconds.
    static constexpr Time fromPs(std::uint64_t ps) { return Time(ps); }
    /// Parses "700 ns", "1.5us", "2e3 ps"; rounds to the nearest ps. Throws UnitError.
    static Time parse(std::string_view text);

    /// Picoseconds.
    constexpr std::uint64_t ps() const { return value; }
    /// Seconds, as a double (inexact beyond 2^53 ps).
    double seconds() const { return static_cast<double>(value) * 1e-12; }

    Time& operator+=(Time other);
    /// Throws UnitError if `other` is later than this time (times are never negative).
    Time& operator-=(Time other);

    friend constexpr bool operator==(Time a, Time b) { return a.value == b.value; }
    friend constexpr bool operator!=(Time a, Time b) { return a.value != b.value; }
    friend constexpr bool operator<(Time a, Time b) { return a.value < b.value; }
    friend constexpr bool operator<=(Time a, Time b) { return a.value <= b.value; }
    friend constexpr bool operator>(Time a, Time b) { return a.value > b.value; }
    friend constexpr bool operator>=(Time a, Time b) { return a.value >= b.value; }

private:
    explicit constexpr Time(std::uint64_t ps) : value(ps) {}
    std::uint64_t value = 0;
};

namespace units {
// The error paths of Time's + and -, out of line so that the arithmetic itself inlines (the
// streaming plan adds times a few times per DMA chunk). Each throws UnitError.
[[noreturn]] void throwTimeSumBeyondRange(Time a, Time b);
[[noreturn]] void throwTimeDifferenceNegative(Time a, Time b);
} // namespace units

inline Time operator+(Time a, Time b)
{
    std::uint64_t sum = 0;
    if (__builtin_add_overflow(a.ps(), b.ps(), &sum))
        units::throwTimeSumBeyondRange(a, b);
    return Time::fromPs(sum);
}
/// Throws UnitError if b > a.
inline Time operator-(Time a, Time b)
{
    if (b.ps() > a.ps())
        units::throwTimeDifferenceNegative(a, b);
    return Time::fromPs(a.ps() - b.ps());
}
inline Time& Time::operator+=(Time other)
{
    return *this = *this + other;
}
inline Time& Time::operator-=(Time other)
{
    return *this = *this - other;
}
/// How many times b fits in a, as a double (e.g. a utilisation). Throws UnitError if b is 0.
double operator/(Time a, Time b);
/// n repetitions of a time. Throws UnitError on overflow or a negative count.
Time multiply(Time time, unsigned long long count);
template <typename Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Time operator*(Time time, Int count)
{
    if constexpr (std::is_signed_v<Int>)
        units::checkCount(count, "a time");
    return multiply(time, static_cast<unsigned long long>(count));
}
template <typename Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Time operator*(Int count, Time time)
{
    return time * count;
}

// A whole number of bytes (0 to 2^64 - 1). Arithmetic that would leave that range throws.
class Size {
public:
    static constexpr const char* kindName = "size";

    constexpr Size() = default;
    /// A size of `bytes` bytes.
    static constexpr Size fromBytes(std::uint64_t bytes) { return Size(bytes); }
    /// Parses "80 GiB", "1.5 KB", "64B"; the result must be whole bytes. Throws UnitError.
    static Size parse(std::string_view text);

    /// Bytes.
    constexpr std::uint64_t bytes() const { return value; }

    Size& operator+=(Size other);
    /// Throws UnitError if `other` is larger than this size.
    Size& operator-=(Size other);

    friend constexpr bool operator==(Size a, Size b) { return a.value == b.value; }
    friend constexpr bool operator!=(Size a, Size b) { return a.value != b.value; }
    friend constexpr bool operator<(Size a, Size b) { return a.value < b.value; }
    friend constexpr bool operator<=(Size a, Size b) { return a.value <= b.value; }
    friend constexpr bool operator>(Size a, Size b) { return a.value > b.value; }
    friend constexpr bool operator>=(Size a, Size b) { return a.value >= b.value; }

private:
    explicit constexpr Size(std::uint64_t bytes) : value(bytes) {}
    std::uint64_t value = 0;
};

Size operator+(Size a, Size b);
/// Throws UnitError if b > a.
Size operator-(Size a, Size b);
/// n copies of a size. Throws UnitError on overflow or a negative count.
Size multiply(Size size, unsigned long long count);
template <typename Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Size operator*(Size size, Int count)
{
    if constexpr (std::is_signed_v<Int>)
        units::checkCount(count, "a size");
    return multiply(size, static_cast<unsigned long long>(count));
}
template <typename Int, std::enable_if_t<std::is_integral_v<Int>, int> = 0>
Size operator*(Int count, Size size)
{
    return size * count;
}

// A clock frequency in hertz (finite, not negative).
class Frequency {
public:
    static constexpr const char* kindName = "frequency";

    constexpr Frequency() = default;
    /// A frequency of `hz` hertz. Throws UnitError if negative, infinite or NaN.
    static Frequency fromHz(double hz);
    /// Parses "1.98 GHz", "2e9 Hz", "800MHz". Throws UnitError.
    static Frequency parse(std::string_view text);

    /// Hertz.
    constexpr double hz() const { return value; }
    /// One clock period, rounded to the nearest ps. Throws UnitError for 0 Hz.
    Time period() const;

    friend constexpr bool operator==(Frequency a, Frequency b) { return a.value == b.value; }
    friend constexpr bool operator!=(Frequency a, Frequency b) { return a.value != b.value; }
    friend constexpr bool operator<(Frequency a, Frequency b) { return a.value < b.value; }
    friend constexpr bool operator<=(Frequency a, Frequency b) { return a.value <= b.value; }
    friend constexpr bool operator>(Frequency a, Frequency b) { return a.value > b.value; }
    friend constexpr bool operator>=(Frequency a, Frequency b) { return a.value >= b.value; }

private:
    explicit constexpr Frequency(double hz) : value(hz) {}
    double value = 0.0;
};

/// The time `cycles` clock cycles take, rounded to the nearest ps (exact up to 2^64 ps).
/// Throws UnitError for 0 Hz or a result beyond the range of Time.
Time operator/(std::uint64_t cycles, Frequency frequency);
/// Clock cycles in a time (fractional; round as the model requires).
double operator*(Frequency frequency, Time time);
double operator*(Time time, Frequency frequency);
/// A scaled frequency (e.g. a clock divider). Throws UnitError for a negative factor.
Frequency operator*(Frequency frequency, double factor);

// A data rate in bytes per second (finite, not negative).
class Bandwidth {
public:
    static constexpr const char* kindName = "bandwidth";

    constexpr Bandwidth() = default;
    /// A rate of `bytesPerSecond` B/s. Throws UnitError if negative, infinite or NaN.
    static Bandwidth fromBytesPerSecond(double bytesPerSecond);
    /// Parses "900 GB/s", "64 GiB/s", "400 Gbps", "100Gb/s". Throws UnitError.
    static Bandwidth parse(std::string_view text);

    /// Bytes per second.
    constexpr double bytesPerSecond() const { return value; }

    friend constexpr bool operator==(Bandwidth a, Bandwidth b) { return a.value == b.value; }
    friend constexpr bool operator!=(Bandwidth a, Bandwidth b) { return a.value != b.value; }
    friend constexpr bool operator<(Bandwidth a, Bandwidth b) { return a.value < b.value; }
    friend constexpr bool operator<=(Bandwidth a, Bandwidth b) { return a.value <= b.value; }
    friend constexpr bool operator>(Bandwidth a, Bandwidth b) { return a.value > b.value; }
    friend constexpr bool operator>=(Bandwidth a, Bandwidth b) { return a.value >= b.value; }

private:
    explicit constexpr Bandwidth(double bytesPerSecond) : value(bytesPerSecond) {}
    double value = 0.0;
};

/// The time to move `size` at `bandwidth`, rounded to the nearest ps (exact up to 2^64 ps).
/// Throws UnitError for a zero bandwidth with a non-zero size, or beyond the range of Time.
Time operator/(Size size, Bandwidth bandwidth);
/// The rate that moves `size` in `time`. Throws UnitError for a zero time.
Bandwidth operator/(Size size, Time time);
/// Aggregate of two rates (e.g. parallel links).
Bandwidth operator+(Bandwidth a, Bandwidth b);
/// A scaled rate (e.g. an efficiency factor or a link count). Throws for a negative factor.
Bandwidth operator*(Bandwidth bandwidth, double factor);

// A compute rate in floating-point operations per second (finite, not negative).
class FlopRate {
public:
    static constexpr const char* kindName = "FLOP rate";

    constexpr FlopRate() = default;
    /// A rate of `flopsPerSecond` FLOP/s. Throws UnitError if negative, infinite or NaN.
    static FlopRate fromFlopsPerSecond(double flopsPerSecond);
    /// Parses "989 TFLOP/s", "312 TFLOPS", "1.2e15 FLOP/s". Throws UnitError.
    static FlopRate parse(std::string_view text);

    /// FLOP per second.
    constexpr double flopsPerSecond() const { return value; }

    friend constexpr bool operator==(FlopRate a, FlopRate b) { return a.value == b.value; }
    friend constexpr bool operator!=(FlopRate a, FlopRate b) { return a.value != b.value; }
    friend constexpr bool operator<(FlopRate a, FlopRate b) { return a.value < b.value; }
    friend constexpr bool operator<=(FlopRate a, FlopRate b) { return a.value <= b.value; }
    friend constexpr bool operator>(FlopRate a, FlopRate b) { return a.value > b.value; }
    friend constexpr bool operator>=(FlopRate a, FlopRate b) { return a.value >= b.value; }

private:
    explicit constexpr FlopRate(double flopsPerSecond) : value(flopsPerSecond) {}
    double value = 0.0;
};

/// The time `flops` operations take at `rate`, rounded to the nearest ps. Throws UnitError
/// for a negative count, a zero rate with a non-zero count, or beyond the range of Time.
Time operator/(double flops, FlopRate rate);
/// A scaled rate (e.g. an achieved fraction of peak). Throws UnitError for a negative factor.
FlopRate operator*(FlopRate rate, double factor);

/// Datasheet text that parses back to the same value, e.g. "700 ns" (see the rules above).
std::string toString(Time time);
std::string toString(Size size);
std::string toString(Frequency frequency);
std::string toString(Bandwidth bandwidth);
std::string toString(FlopRate rate);

/// Rounded text for report tables, not meant to parse back: three decimals in the largest of
/// ns, us, ms that leaves a number >= 1, ns below that ("1.202 ms", "0.500 ns").
std::string toRoundedString(Time time);
/// Rounded byte counts for reports: three decimals in the largest of kB, MB, GB that leaves a
/// number >= 1, whole bytes below 1 kB ("1.202 GB", "512 B"). A double, because measured
/// volumes (link bytes) are sums of fractional shares.
std::string toRoundedBytes(double bytes);

std::ostream& operator<<(std::ostream& out, Time time);
std::ostream& operator<<(std::ostream& out, Size size);
std::ostream& operator<<(std::ostream& out, Frequency frequency);
std::ostream& operator<<(std::ostream& out, Bandwidth bandwidth);
std::ostream& operator<<(std::ostream& out, FlopRate rate);

} // namespace etsim
