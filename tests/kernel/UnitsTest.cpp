// Longer than most files: one case per unit, printer round trip and overflow rule of
// kernel/Units.h, which every model and parser relies on.
#include "kernel/Units.h"

#include "kernel/Error.h"
#include "kernel/ScTime.h"
#include "tests/support/ErrorOf.h"
#include "tests/support/ScTest.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

namespace etsim {
namespace {

template <typename Action>
std::string errorOf(Action&& action)
{
    return test::errorOf<UnitError>(std::forward<Action>(action));
}

constexpr std::uint64_t maxU64 = std::numeric_limits<std::uint64_t>::max();

// The message of the UnitError `action` throws, or a marker that fails any comparison.
std::uint64_t ps(std::string_view text)
{
    return Time::parse(text).ps();
}

std::uint64_t bytes(std::string_view text)
{
    return Size::parse(text).bytes();
}

double hz(std::string_view text)
{
    return Frequency::parse(text).hz();
}

double bytesPerSecond(std::string_view text)
{
    return Bandwidth::parse(text).bytesPerSecond();
}

double flopsPerSecond(std::string_view text)
{
    return FlopRate::parse(text).flopsPerSecond();
}

// ---- parsing, every unit ----------------------------------------------------------------

TEST(UnitsParse, TimeUnits)
{
    EXPECT_EQ(ps("1 ps"), 1u);
    EXPECT_EQ(ps("700 ns"), 700'000u);
    EXPECT_EQ(ps("700ns"), 700'000u);
    EXPECT_EQ(ps("1.5 us"), 1'500'000u);
    EXPECT_EQ(ps("2 \xC2\xB5s"), 2'000'000u);
    EXPECT_EQ(ps("2 \xCE\xBCs"), 2'000'000u);
    EXPECT_EQ(ps("3 ms"), 3'000'000'000u);
    EXPECT_EQ(ps("2 s"), 2'000'000'000'000u);
    EXPECT_EQ(ps("0 s"), 0u);
}

TEST(UnitsParse, NumberForms)
{
    EXPECT_EQ(ps("2e3 ps"), 2000u);
    EXPECT_EQ(ps("2E+3ps"), 2000u);
    EXPECT_EQ(ps("7E-1 ns"), 700u);
    EXPECT_EQ(ps(".5 ns"), 500u);
    EXPECT_EQ(ps("5. ns"), 5000u);
    EXPECT_EQ(ps("+5 ns"), 5000u);
    EXPECT_EQ(ps("  \t700 ns\t "), 700'000u);
    EXPECT_EQ(ps("700 \t ns"), 700'000u);
    EXPECT_EQ(ps("000700.000 ns"), 700'000u);
    EXPECT_EQ(ps("0.000001 s"), 1'000'000u);
    EXPECT_EQ(hz("2e9 Hz"), 2e9);
    EXPECT_EQ(hz("1.98 GHz"), 1.98e9);
    EXPECT_EQ(bytes("1e3 B"), 1000u);
    EXPECT_EQ(bytes("1e-3 MB"), 1000u);
}

TEST(UnitsParse, TimeRoundsToNearestPicosecondHalfAwayFromZero)
{
    EXPECT_EQ(ps("0.4 ps"), 0u);
    EXPECT_EQ(ps("0.5 ps"), 1u);
    EXPECT_EQ(ps("1.4999 ps"), 1u);
    EXPECT_EQ(ps("2.5 ps"), 3u);
    EXPECT_EQ(ps("0.0015 ns"), 2u);
    EXPECT_EQ(ps("1e-13 s"), 0u);
    EXPECT_EQ(ps("1.23456789 ns"), 1235u);
    EXPECT_EQ(ps("1e-99999 s"), 0u);
    // Digits beyond the 20 kept still decide a tie.
    EXPECT_EQ(ps("0.500000000000000000000001 ps"), 1u);
    EXPECT_EQ(ps("0.499999999999999999999999 ps"), 0u);
    EXPECT_EQ(ps("0.50000000000000000000000 ps"), 1u);
}

TEST(UnitsParse, TimeLimits)
{
    EXPECT_EQ(ps("18446744073709551615 ps"), maxU64);
    EXPECT_EQ(ps("18446744.073709551615 s"), maxU64);
    EXPECT_EQ(ps("18446744073709551615.4 ps"), maxU64);
    EXPECT_EQ(ps("1844674407370955161500000e-5 ps"), maxU64);
    // The 21st digit is the first one dropped; it still decides the rounding.
    EXPECT_EQ(ps("18446744073709551614.5 ps"), maxU64);
    EXPECT_EQ(ps("18446744073709551614.4999 ps"), maxU64 - 1);
    EXPECT_EQ(ps("18446744073709551614.0001 ps"), maxU64 - 1);
}

TEST(UnitsParse, FrequencyUnits)
{
    EXPECT_EQ(hz("50 Hz"), 50.0);
    EXPECT_EQ(hz("100 kHz"), 1e5);
    EXPECT_EQ(hz("800MHz"), 8e8);
    EXPECT_EQ(hz("1.98 GHz"), 1.98e9);
    EXPECT_EQ(hz("0 Hz"), 0.0);
    EXPECT_EQ(hz("1e-400 Hz"), 0.0);
}

TEST(UnitsParse, BandwidthByteUnitsAreDecimal)
{
    EXPECT_EQ(bytesPerSecond("1 B/s"), 1.0);
    EXPECT_EQ(bytesPerSecond("2 KB/s"), 2e3);
    EXPECT_EQ(bytesPerSecond("2 kB/s"), 2e3);
    EXPECT_EQ(bytesPerSecond("3 MB/s"), 3e6);
    EXPECT_EQ(bytesPerSecond("900 GB/s"), 9e11);
    EXPECT_EQ(bytesPerSecond("900GB/s"), 9e11);
    EXPECT_EQ(bytesPerSecond("1.5 TB/s"), 1.5e12);
}

TEST(UnitsParse, BandwidthBinaryUnits)
{
    EXPECT_EQ(bytesPerSecond("1 KiB/s"), 1024.0);
    EXPECT_EQ(bytesPerSecond("1 MiB/s"), 1048576.0);
    EXPECT_EQ(bytesPerSecond("64 GiB/s"), 64.0 * 1073741824.0);
    EXPECT_EQ(bytesPerSecond("1 TiB/s"), 1099511627776.0);
}

TEST(UnitsParse, BandwidthBitUnitsAreDecimalOverEight)
{
    EXPECT_EQ(bytesPerSecond("8 bps"), 1.0);
    EXPECT_EQ(bytesPerSecond("8 Kbps"), 1e3);
    EXPECT_EQ(bytesPerSecond("8 kbps"), 1e3);
    EXPECT_EQ(bytesPerSecond("800 Mbps"), 1e8);
    EXPECT_EQ(bytesPerSecond("400 Gbps"), 5e10);
    EXPECT_EQ(bytesPerSecond("1 Tbps"), 1.25e11);
    EXPECT_EQ(bytesPerSecond("8 b/s"), 1.0);
    EXPECT_EQ(bytesPerSecond("8 Kb/s"), 1e3);
    EXPECT_EQ(bytesPerSecond("8 kb/s"), 1e3);
    EXPECT_EQ(bytesPerSecond("800 Mb/s"), 1e8);
    EXPECT_EQ(bytesPerSecond("100 Gb/s"), 12.5e9);
    EXPECT_EQ(bytesPerSecond("2 Tb/s"), 2.5e11);
    EXPECT_EQ(bytesPerSecond("8 bit/s"), 1.0);
    EXPECT_EQ(bytesPerSecond("8 Kbit/s"), 1e3);
    EXPECT_EQ(bytesPerSecond("8 kbit/s"), 1e3);
    EXPECT_EQ(bytesPerSecond("8 Mbit/s"), 1e6);
    EXPECT_EQ(bytesPerSecond("400 Gbit/s"), 5e10);
    EXPECT_EQ(bytesPerSecond("8 Tbit/s"), 1e12);
}

TEST(UnitsParse, SizeUnits)
{
    EXPECT_EQ(bytes("64 B"), 64u);
    EXPECT_EQ(bytes("64B"), 64u);
    EXPECT_EQ(bytes("1 KB"), 1000u);
    EXPECT_EQ(bytes("1 kB"), 1000u);
    EXPECT_EQ(bytes("1.5 KB"), 1500u);
    EXPECT_EQ(bytes("2 MB"), 2'000'000u);
    EXPECT_EQ(bytes("80 GB"), 80'000'000'000u);
    EXPECT_EQ(bytes("1 TB"), 1'000'000'000'000u);
    EXPECT_EQ(bytes("1 KiB"), 1024u);
    EXPECT_EQ(bytes("1.5 KiB"), 1536u);
    EXPECT_EQ(bytes("0.5 KiB"), 512u);
    EXPECT_EQ(bytes("16 MiB"), 16u << 20);
    EXPECT_EQ(bytes("80 GiB"), 80ull << 30);
    EXPECT_EQ(bytes("1 TiB"), 1ull << 40);
    EXPECT_EQ(bytes("0.0009765625 MiB"), 1024u);
    EXPECT_EQ(bytes("0.00000095367431640625 TiB"), 1u << 20);
    EXPECT_EQ(bytes("18446744073709551615 B"), maxU64);
    EXPECT_EQ(bytes("18446744073709551615.00000 B"), maxU64);
}

TEST(UnitsParse, FlopRateUnits)
{
    EXPECT_EQ(flopsPerSecond("1 FLOP/s"), 1.0);
    EXPECT_EQ(flopsPerSecond("1 KFLOP/s"), 1e3);
    EXPECT_EQ(flopsPerSecond("1 kFLOP/s"), 1e3);
    EXPECT_EQ(flopsPerSecond("1 MFLOP/s"), 1e6);
    EXPECT_EQ(flopsPerSecond("19.5 GFLOP/s"), 19.5e9);
    EXPECT_EQ(flopsPerSecond("989 TFLOP/s"), 989e12);
    EXPECT_EQ(flopsPerSecond("1.5 PFLOP/s"), 1.5e15);
    EXPECT_EQ(flopsPerSecond("7 FLOPS"), 7.0);
    EXPECT_EQ(flopsPerSecond("7 KFLOPS"), 7e3);
    EXPECT_EQ(flopsPerSecond("7 kFLOPS"), 7e3);
    EXPECT_EQ(flopsPerSecond("7 MFLOPS"), 7e6);
    EXPECT_EQ(flopsPerSecond("7 GFLOPS"), 7e9);
    EXPECT_EQ(flopsPerSecond("312 TFLOPS"), 312e12);
    EXPECT_EQ(flopsPerSecond("2 PFLOPS"), 2e15);
    EXPECT_EQ(flopsPerSecond("3 Flop/s"), 3.0);
    EXPECT_EQ(flopsPerSecond("3 flop/s"), 3.0);
}

// ---- errors -----------------------------------------------------------------------------

TEST(UnitsErrors, UnknownUnitSuggestsNearest)
{
    EXPECT_EQ(errorOf([] { Bandwidth::parse("900 GBs"); }),
              "\"900 GBs\": unknown unit \"GBs\" (did you mean \"GB/s\"?)");
    EXPECT_EQ(errorOf([] { Bandwidth::parse("64 GiBps"); }),
              "\"64 GiBps\": unknown unit \"GiBps\" (did you mean \"GiB/s\"?)");
    EXPECT_EQ(errorOf([] { Time::parse("5 nsec"); }),
              "\"5 nsec\": unknown unit \"nsec\" (did you mean \"ns\"?)");
    EXPECT_EQ(errorOf([] { Size::parse("4 KIB"); }),
              "\"4 KIB\": unknown unit \"KIB\" (did you mean \"KiB\"?)");
}

TEST(UnitsErrors, WrongCaseSuggestsTheAcceptedSpelling)
{
    EXPECT_EQ(errorOf([] { Frequency::parse("1.98 ghz"); }),
              "\"1.98 ghz\": unknown unit \"ghz\" (did you mean \"GHz\"?)");
    EXPECT_EQ(errorOf([] { Frequency::parse("100 KHz"); }),
              "\"100 KHz\": unknown unit \"KHz\" (did you mean \"kHz\"?)");
    EXPECT_EQ(errorOf([] { Time::parse("5 NS"); }),
              "\"5 NS\": unknown unit \"NS\" (did you mean \"ns\"?)");
    EXPECT_EQ(errorOf([] { FlopRate::parse("312 Tflops"); }),
              "\"312 Tflops\": unknown unit \"Tflops\" (did you mean \"TFLOPS\"?)");
    // Bytes are offered first when the case could mean bytes or bits.
    EXPECT_EQ(errorOf([] { Bandwidth::parse("9 gb/s"); }),
              "\"9 gb/s\": unknown unit \"gb/s\" (did you mean \"GB/s\"?)");
}

TEST(UnitsErrors, UnknownUnitWithNothingNearListsTheUnits)
{
    EXPECT_EQ(errorOf([] { Time::parse("5 xyz"); }),
              "\"5 xyz\": unknown unit \"xyz\", expected one of ps, ns, us, ms, s");
    EXPECT_EQ(errorOf([] { Size::parse("0x10 B"); }),
              "\"0x10 B\": unknown unit \"x10 B\", expected one of B, KB, MB, GB, TB, KiB, MiB, "
              "GiB, TiB");
    EXPECT_EQ(errorOf([] { Frequency::parse("1,000 MHz"); }),
              "\"1,000 MHz\": unknown unit \",000 MHz\", expected one of Hz, kHz, MHz, GHz");
    EXPECT_EQ(errorOf([] { FlopRate::parse("1 ops"); }),
              "\"1 ops\": unknown unit \"ops\", expected one of FLOP/s, KFLOP/s, MFLOP/s, "
              "GFLOP/s, TFLOP/s, PFLOP/s");
}

TEST(UnitsErrors, MissingUnit)
{
    EXPECT_EQ(errorOf([] { Bandwidth::parse("900"); }),
              "\"900\": missing unit, expected one of B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, "
              "GiB/s, TiB/s, bps, Kbps, Mbps, Gbps, Tbps, b/s, Kb/s, Mb/s, Gb/s, Tb/s");
    EXPECT_EQ(errorOf([] { Time::parse("700 "); }),
              "\"700 \": missing unit, expected one of ps, ns, us, ms, s");
    EXPECT_EQ(errorOf([] { Size::parse("2e9"); }),
              "\"2e9\": missing unit, expected one of B, KB, MB, GB, TB, KiB, MiB, GiB, TiB");
}

TEST(UnitsErrors, UnitOfTheWrongKind)
{
    EXPECT_EQ(errorOf([] { Time::parse("3 GHz"); }),
              "\"3 GHz\" is a frequency, a time was expected");
    EXPECT_EQ(errorOf([] { Size::parse("5 ps"); }), "\"5 ps\" is a time, a size was expected");
    EXPECT_EQ(errorOf([] { Frequency::parse("5 TFLOP/s"); }),
              "\"5 TFLOP/s\" is a FLOP rate, a frequency was expected");
    EXPECT_EQ(errorOf([] { FlopRate::parse("5 GB/s"); }),
              "\"5 GB/s\" is a bandwidth, a FLOP rate was expected");
    EXPECT_EQ(errorOf([] { Bandwidth::parse("900 GB"); }),
              "\"900 GB\" is a size, a bandwidth was expected (did you mean \"GB/s\"?)");
}

TEST(UnitsErrors, Negative)
{
    EXPECT_EQ(errorOf([] { Time::parse("-5 ns"); }),
              "\"-5 ns\": negative, a time cannot be negative");
    EXPECT_EQ(errorOf([] { Size::parse("-0 B"); }),
              "\"-0 B\": negative, a size cannot be negative");
    EXPECT_EQ(errorOf([] { Frequency::parse("-1 GHz"); }),
              "\"-1 GHz\": negative, a frequency cannot be negative");
    EXPECT_EQ(errorOf([] { Bandwidth::parse("-1 GB/s"); }),
              "\"-1 GB/s\": negative, a bandwidth cannot be negative");
    EXPECT_EQ(errorOf([] { FlopRate::parse("-1 TFLOPS"); }),
              "\"-1 TFLOPS\": negative, a FLOP rate cannot be negative");
}

TEST(UnitsErrors, NotANumber)
{
    EXPECT_EQ(errorOf([] { Time::parse("abc ns"); }),
              "\"abc ns\": not a number, expected a time such as \"700 ns\"");
    EXPECT_EQ(errorOf([] { Time::parse("ns"); }),
              "\"ns\": not a number, expected a time such as \"700 ns\"");
    EXPECT_EQ(errorOf([] { Frequency::parse("inf Hz"); }),
              "\"inf Hz\": not a number, expected a frequency such as \"1.98 GHz\"");
    EXPECT_EQ(errorOf([] { Bandwidth::parse("nan GB/s"); }),
              "\"nan GB/s\": not a number, expected a bandwidth such as \"900 GB/s\"");
    EXPECT_EQ(errorOf([] { Size::parse("- 5 B"); }),
              "\"- 5 B\": not a number, expected a size such as \"80 GiB\"");
    EXPECT_EQ(errorOf([] { FlopRate::parse(". TFLOPS"); }),
              "\". TFLOPS\": not a number, expected a FLOP rate such as \"989 TFLOP/s\"");
}

TEST(UnitsErrors, Empty)
{
    EXPECT_EQ(errorOf([] { Time::parse(""); }), "\"\": empty, expected a time such as \"700 ns\"");
    EXPECT_EQ(errorOf([] { Size::parse(" \t "); }),
              "\" \t \": empty, expected a size such as \"80 GiB\"");
}

TEST(UnitsErrors, Overflow)
{
    const std::string largestTime = "a time must be at most 18446744.073709551615 s";
    EXPECT_EQ(errorOf([] { Time::parse("1e30 s"); }), "\"1e30 s\": too large, " + largestTime);
    EXPECT_EQ(errorOf([] { Time::parse("18446744073709551616 ps"); }),
              "\"18446744073709551616 ps\": too large, " + largestTime);
    EXPECT_EQ(errorOf([] { Time::parse("18446744073709551615.5 ps"); }),
              "\"18446744073709551615.5 ps\": too large, " + largestTime);
    EXPECT_EQ(errorOf([] { Time::parse("1e99999999 ps"); }),
              "\"1e99999999 ps\": too large, " + largestTime);
    const std::string largestSize = "a size must be at most 18446744.073709551615 TB";
    EXPECT_EQ(errorOf([] { Size::parse("20000000 TB"); }),
              "\"20000000 TB\": too large, " + largestSize);
    EXPECT_EQ(errorOf([] { Size::parse("16 TiB"); }), "(no error)");
    EXPECT_EQ(errorOf([] { Size::parse("16777216 TiB"); }),
              "\"16777216 TiB\": too large, " + largestSize);
    EXPECT_EQ(errorOf([] { Size::parse("18446744073709551616 B"); }),
              "\"18446744073709551616 B\": too large, " + largestSize);
    EXPECT_EQ(errorOf([] { Frequency::parse("1e400 Hz"); }),
              "\"1e400 Hz\": too large for a frequency");
    EXPECT_EQ(errorOf([] { Bandwidth::parse("1e300 TB/s"); }),
              "\"1e300 TB/s\": too large for a bandwidth");
    EXPECT_EQ(errorOf([] { FlopRate::parse("1e308 PFLOP/s"); }),
              "\"1e308 PFLOP/s\": too large for a FLOP rate");
}

TEST(UnitsErrors, FractionalBytes)
{
    const std::string problem = ": not a whole number of bytes (sizes are counted in whole bytes)";
    EXPECT_EQ(errorOf([] { Size::parse("1.5 B"); }), "\"1.5 B\"" + problem);
    EXPECT_EQ(errorOf([] { Size::parse("0.1 KiB"); }), "\"0.1 KiB\"" + problem);
    EXPECT_EQ(errorOf([] { Size::parse("1.0001 KB"); }), "\"1.0001 KB\"" + problem);
    EXPECT_EQ(errorOf([] { Size::parse("1e-30 B"); }), "\"1e-30 B\"" + problem);
    // Beyond 20 significant digits a size is no longer exact, which is said as such.
    EXPECT_EQ(errorOf([] { Size::parse("1.000000000000000000001 B"); }),
              "\"1.000000000000000000001 B\": too many significant digits, a size is read "
              "exactly to 20 digits");
}

// ---- printing ---------------------------------------------------------------------------

TEST(UnitsPrint, Time)
{
    EXPECT_EQ(toString(Time::fromPs(0)), "0 ps");
    EXPECT_EQ(toString(Time::fromPs(1)), "1 ps");
    EXPECT_EQ(toString(Time::fromPs(999)), "999 ps");
    EXPECT_EQ(toString(Time::fromPs(1000)), "1 ns");
    EXPECT_EQ(toString(Time::fromPs(1500)), "1.5 ns");
    EXPECT_EQ(toString(Time::fromPs(700'000)), "700 ns");
    EXPECT_EQ(toString(Time::fromPs(1'234'567)), "1.234567 us");
    EXPECT_EQ(toString(Time::fromPs(1'000'001)), "1.000001 us");
    EXPECT_EQ(toString(Time::fromPs(3'000'000'000)), "3 ms");
    EXPECT_EQ(toString(Time::fromPs(1'500'000'000'000)), "1.5 s");
    EXPECT_EQ(toString(Time::fromPs(3'600'000'000'000'000)), "3600 s");
    EXPECT_EQ(toString(Time::fromPs(maxU64)), "18446744.073709551615 s");
}

TEST(UnitsPrint, SizePicksFewerDigitsDecimalOnTie)
{
    EXPECT_EQ(toString(Size::fromBytes(0)), "0 B");
    EXPECT_EQ(toString(Size::fromBytes(64)), "64 B");
    EXPECT_EQ(toString(Size::fromBytes(1000)), "1 KB");
    EXPECT_EQ(toString(Size::fromBytes(1023)), "1.023 KB");
    EXPECT_EQ(toString(Size::fromBytes(1024)), "1 KiB");
    EXPECT_EQ(toString(Size::fromBytes(1500)), "1.5 KB");
    EXPECT_EQ(toString(Size::fromBytes(1536)), "1.5 KiB");
    EXPECT_EQ(toString(Size::fromBytes(1'000'000)), "1 MB");
    EXPECT_EQ(toString(Size::fromBytes(1'024'000)), "1.024 MB");
    EXPECT_EQ(toString(Size::fromBytes(1 << 20)), "1 MiB");
    EXPECT_EQ(toString(Size::fromBytes(80'000'000'000)), "80 GB");
    EXPECT_EQ(toString(Size::fromBytes(80ull << 30)), "80 GiB");
    EXPECT_EQ(toString(Size::fromBytes(1ull << 40)), "1 TiB");
    EXPECT_EQ(toString(Size::fromBytes(1ull << 50)), "1024 TiB");
    EXPECT_EQ(toString(Size::fromBytes(maxU64)), "18446744.073709551615 TB");
    EXPECT_EQ(toString(Size::fromBytes(1025)), "1.025 KB");
}

TEST(UnitsPrint, Rates)
{
    EXPECT_EQ(toString(Frequency::parse("1.98 GHz")), "1.98 GHz");
    EXPECT_EQ(toString(Frequency::fromHz(2e9)), "2 GHz");
    EXPECT_EQ(toString(Frequency::fromHz(8e8)), "800 MHz");
    EXPECT_EQ(toString(Frequency::fromHz(1e5)), "100 kHz");
    EXPECT_EQ(toString(Frequency::fromHz(50)), "50 Hz");
    EXPECT_EQ(toString(Frequency::fromHz(0)), "0 Hz");
    EXPECT_EQ(toString(Frequency::fromHz(0.5)), "0.5 Hz");
    EXPECT_EQ(toString(Frequency::fromHz(1e15)), "1000000 GHz");
    EXPECT_EQ(toString(Bandwidth::parse("900 GB/s")), "900 GB/s");
    EXPECT_EQ(toString(Bandwidth::parse("100 Gbps")), "12.5 GB/s");
    EXPECT_EQ(toString(Bandwidth::parse("1.5 TB/s")), "1.5 TB/s");
    EXPECT_EQ(toString(Bandwidth::parse("64 GiB/s")), "68.719476736 GB/s");
    EXPECT_EQ(toString(Bandwidth::fromBytesPerSecond(1)), "1 B/s");
    EXPECT_EQ(toString(Bandwidth::fromBytesPerSecond(0)), "0 B/s");
    EXPECT_EQ(toString(FlopRate::parse("989 TFLOPS")), "989 TFLOP/s");
    EXPECT_EQ(toString(FlopRate::parse("1.5 PFLOP/s")), "1.5 PFLOP/s");
    EXPECT_EQ(toString(FlopRate::fromFlopsPerSecond(1e18)), "1000 PFLOP/s");
    EXPECT_EQ(toString(FlopRate::fromFlopsPerSecond(0)), "0 FLOP/s");
}

TEST(UnitsPrint, StreamsUseToString)
{
    std::ostringstream out;
    out << Time::fromPs(700'000) << ' ' << Size::fromBytes(80ull << 30) << ' '
        << Frequency::fromHz(1.98e9) << ' ' << Bandwidth::fromBytesPerSecond(9e11) << ' '
        << FlopRate::fromFlopsPerSecond(989e12);
    EXPECT_EQ(out.str(), "700 ns 80 GiB 1.98 GHz 900 GB/s 989 TFLOP/s");
}

// Datasheet figures print back exactly as written, in the unit they were written in.
TEST(UnitsPrint, DatasheetFiguresPrintAsWritten)
{
    int checked = 0;
    for (int mantissa = 1; mantissa < 1000; ++mantissa) {
        for (int point = 0; point < 3; ++point) {
            std::string number = std::to_string(mantissa);
            if (point > 0 && number.size() > static_cast<std::size_t>(point)) {
                number.insert(number.size() - static_cast<std::size_t>(point), ".");
                if (number.back() == '0')
                    continue; // "1.20" prints as "1.2"
            } else if (point > 0) {
                continue;
            }
            for (const char* unit : {" MHz", " GHz"}) {
                EXPECT_EQ(toString(Frequency::parse(number + unit)), number + unit);
                ++checked;
            }
            for (const char* unit : {" KB/s", " MB/s", " GB/s", " TB/s"}) {
                EXPECT_EQ(toString(Bandwidth::parse(number + unit)), number + unit);
                ++checked;
            }
            for (const char* unit : {" GFLOP/s", " TFLOP/s", " PFLOP/s"}) {
                EXPECT_EQ(toString(FlopRate::parse(number + unit)), number + unit);
                ++checked;
            }
            for (const char* unit : {" ns", " us", " ms"}) {
                EXPECT_EQ(toString(Time::parse(number + unit)), number + unit);
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 20000);
}

// ---- round trips ------------------------------------------------------------------------

TEST(UnitsRoundTrip, TimeAndSizeOverTheWholeRange)
{
    std::mt19937_64 random(12345);
    for (int i = 0; i < 200'000; ++i) {
        std::uint64_t value = random() >> (random() % 64);
        Time time = Time::fromPs(value);
        ASSERT_EQ(Time::parse(toString(time)), time) << toString(time);
        Size size = Size::fromBytes(value);
        ASSERT_EQ(Size::parse(toString(size)), size) << toString(size);
        // Binary-friendly sizes exercise the binary branch.
        Size binary = Size::fromBytes((value >> 20) << (random() % 21));
        ASSERT_EQ(Size::parse(toString(binary)), binary) << toString(binary);
    }
    for (std::uint64_t value : {std::uint64_t{0}, std::uint64_t{1}, maxU64, maxU64 - 1}) {
        EXPECT_EQ(Time::parse(toString(Time::fromPs(value))).ps(), value);
        EXPECT_EQ(Size::parse(toString(Size::fromBytes(value))).bytes(), value);
    }
}

TEST(UnitsRoundTrip, RatesOverManyMagnitudes)
{
    std::mt19937_64 random(777);
    std::uniform_real_distribution<double> unit(1.0, 10.0);
    for (int i = 0; i < 200'000; ++i) {
        double value = unit(random) * std::pow(10.0, static_cast<int>(random() % 40) - 10);
        if (i % 3 == 0) // short decimal mantissas, as typed in platform files
            value = std::round(value * 1e3 / std::pow(10.0, std::floor(std::log10(value)))) *
                    std::pow(10.0, std::floor(std::log10(value))) / 1e3;
        Frequency frequency = Frequency::fromHz(value);
        ASSERT_EQ(Frequency::parse(toString(frequency)), frequency) << toString(frequency);
        Bandwidth bandwidth = Bandwidth::fromBytesPerSecond(value);
        ASSERT_EQ(Bandwidth::parse(toString(bandwidth)), bandwidth) << toString(bandwidth);
        FlopRate rate = FlopRate::fromFlopsPerSecond(value);
        ASSERT_EQ(FlopRate::parse(toString(rate)), rate) << toString(rate);
    }
    for (double value : {0.0,
                         std::numeric_limits<double>::denorm_min(),
                         std::numeric_limits<double>::min(),
                         std::numeric_limits<double>::max(),
                         std::nextafter(1e9, 0.0),
                         std::nextafter(1e12, 2e12)}) {
        EXPECT_EQ(Frequency::parse(toString(Frequency::fromHz(value))).hz(), value);
        EXPECT_EQ(Bandwidth::parse(toString(Bandwidth::fromBytesPerSecond(value))),
                  Bandwidth::fromBytesPerSecond(value));
    }
}

// ---- arithmetic -------------------------------------------------------------------------

TEST(UnitsArithmetic, TimeOperators)
{
    Time a = Time::parse("700 ns");
    Time b = Time::parse("300 ns");
    EXPECT_EQ(a + b, Time::parse("1 us"));
    EXPECT_EQ(a - b, Time::parse("400 ns"));
    EXPECT_EQ(a * 3, Time::parse("2.1 us"));
    EXPECT_EQ(3u * a, Time::parse("2.1 us"));
    EXPECT_DOUBLE_EQ(a / b, 7.0 / 3.0);
    EXPECT_TRUE(b < a && b <= a && a > b && a >= b && a != b && a == Time::fromPs(700'000));
    Time sum = a;
    sum += b;
    sum -= a;
    EXPECT_EQ(sum, b);
    EXPECT_DOUBLE_EQ(Time::parse("1.5 ms").seconds(), 1.5e-3);
    EXPECT_EQ(errorOf([&] { (void)(b - a); }),
              "cannot subtract 700 ns from 300 ns: a time cannot be negative");
    EXPECT_EQ(errorOf([&] { (void)(Time::fromPs(maxU64) + Time::fromPs(1)); }),
              "18446744.073709551615 s + 1 ps exceeds the largest time, 18446744.073709551615 s");
    EXPECT_EQ(errorOf([&] { (void)(a * (1ull << 62)); }),
              "700 ns * 4611686018427387904 exceeds the largest time, 18446744.073709551615 s");
    EXPECT_EQ(errorOf([&] { (void)(a * -2); }), "cannot multiply a time by the negative count -2");
    EXPECT_EQ(errorOf([&] { (void)(a / Time()); }), "cannot divide 700 ns by a zero time");
}

TEST(UnitsArithmetic, SizeOperators)
{
    Size a = Size::parse("1 KiB");
    EXPECT_EQ(a + Size::fromBytes(512), Size::parse("1.5 KiB"));
    EXPECT_EQ(a - Size::fromBytes(24), Size::parse("1 KB"));
    EXPECT_EQ(a * 1024, Size::parse("1 MiB"));
    EXPECT_EQ(4 * a, Size::parse("4 KiB"));
    EXPECT_TRUE(Size::parse("1 KB") < a);
    Size total;
    total += a;
    total -= Size::fromBytes(1);
    EXPECT_EQ(total.bytes(), 1023u);
    EXPECT_EQ(errorOf([&] { (void)(Size::fromBytes(1) - a); }),
              "cannot subtract 1 KiB from 1 B: a size cannot be negative");
    EXPECT_EQ(errorOf([&] { (void)(Size::fromBytes(maxU64) + Size::fromBytes(1)); }),
              "18446744.073709551615 TB + 1 B exceeds the largest size, 18446744.073709551615 TB");
    EXPECT_EQ(errorOf([&] { (void)(Size::parse("1 TiB") * (1ull << 30)); }),
              "1 TiB * 1073741824 exceeds the largest size, 18446744.073709551615 TB");
    EXPECT_EQ(errorOf([&] { (void)(a * -1L); }), "cannot multiply a size by the negative count -1");
}

TEST(UnitsArithmetic, FrequencyToTime)
{
    EXPECT_EQ(Frequency::parse("1 GHz").period(), Time::fromPs(1000));
    EXPECT_EQ(Frequency::parse("1.98 GHz").period(), Time::fromPs(505)); // 505.05 ps
    EXPECT_EQ(Frequency::parse("3 GHz").period(), Time::fromPs(333));
    EXPECT_EQ(Frequency::parse("2 GHz").period(), Time::fromPs(500));
    EXPECT_EQ(1000 / Frequency::parse("1.98 GHz"), Time::fromPs(505'051)); // 505050.5 ps
    EXPECT_EQ((std::uint64_t{1} << 40) / Frequency::parse("1 GHz"),
              Time::fromPs((std::uint64_t{1} << 40) * 1000));
    EXPECT_EQ(0 / Frequency(), Time());
    EXPECT_DOUBLE_EQ(Frequency::parse("2 GHz") * Time::parse("1 us"), 2000.0);
    EXPECT_DOUBLE_EQ(Time::parse("1 us") * Frequency::parse("2 GHz"), 2000.0);
    EXPECT_EQ(Frequency::parse("2 GHz") * 0.5, Frequency::parse("1 GHz"));
    EXPECT_TRUE(Frequency::parse("1 GHz") < Frequency::parse("1.98 GHz"));
    EXPECT_EQ(errorOf([] { Frequency().period(); }), "a frequency of 0 Hz has no period");
    EXPECT_EQ(errorOf([] { (void)(5 / Frequency()); }),
              "cannot convert 5 cycles to a time at 0 Hz");
    EXPECT_EQ(errorOf([] { Frequency::parse("1e-8 Hz").period(); }),
              "the period of 1e-08 Hz exceeds the largest time, 18446744.073709551615 s");
    EXPECT_EQ(errorOf([] { (void)(maxU64 / Frequency::parse("1 GHz")); }),
              "18446744073709551615 cycles at 1 GHz exceeds the largest time, "
              "18446744.073709551615 s");
}

TEST(UnitsArithmetic, SizeAndBandwidthToTime)
{
    EXPECT_EQ(Size::parse("1 GB") / Bandwidth::parse("100 GB/s"), Time::parse("10 ms"));
    EXPECT_EQ(Size::parse("64 B") / Bandwidth::parse("900 GB/s"), Time::fromPs(71)); // 71.1
    EXPECT_EQ(Size::parse("1 MiB") / Bandwidth::parse("1 MiB/s"), Time::parse("1 s"));
    EXPECT_EQ(Size::parse("1500 B") / Bandwidth::parse("100 Gbps"), Time::parse("120 ns"));
    EXPECT_EQ(Size() / Bandwidth(), Time());
    EXPECT_EQ(Size::parse("1 GB") / Time::parse("1 ms"), Bandwidth::parse("1 TB/s"));
    EXPECT_EQ(Bandwidth::parse("450 GB/s") + Bandwidth::parse("450 GB/s"),
              Bandwidth::parse("900 GB/s"));
    EXPECT_EQ(Bandwidth::parse("900 GB/s") * 0.5, Bandwidth::parse("450 GB/s"));
    EXPECT_TRUE(Bandwidth::parse("100 Gbps") < Bandwidth::parse("100 GB/s"));
    EXPECT_EQ(errorOf([] { (void)(Size::parse("1 KB") / Bandwidth()); }),
              "cannot move 1 KB at 0 B/s");
    EXPECT_EQ(errorOf([] { (void)(Size::parse("1 KB") / Time()); }),
              "cannot compute the bandwidth of 1 KB in 0 ps");
    EXPECT_EQ(errorOf([] { (void)(Size::parse("1 TB") / Bandwidth::parse("1 B/s")); }),
              "moving 1 TB at 1 B/s exceeds the largest time, 18446744.073709551615 s");
}

TEST(UnitsArithmetic, FlopsToTime)
{
    EXPECT_EQ(1e12 / FlopRate::parse("1 TFLOP/s"), Time::parse("1 s"));
    EXPECT_EQ(2e9 / FlopRate::parse("989 TFLOP/s"), Time::fromPs(2'022'245)); // 2022244.69 ps
    EXPECT_EQ(0.0 / FlopRate(), Time());
    EXPECT_EQ(FlopRate::parse("989 TFLOP/s") * 0.5, FlopRate::parse("494.5 TFLOP/s"));
    EXPECT_TRUE(FlopRate::parse("312 TFLOPS") < FlopRate::parse("989 TFLOPS"));
    EXPECT_EQ(errorOf([] { (void)(1e6 / FlopRate()); }), "cannot run 1000000 FLOP at 0 FLOP/s");
    EXPECT_EQ(errorOf([] { (void)(-1.0 / FlopRate::parse("1 TFLOPS")); }),
              "a FLOP count of -1 is not allowed: it must be finite and not negative");
    EXPECT_EQ(errorOf([] { (void)(1e30 / FlopRate::parse("1 FLOP/s")); }),
              "1e+30 FLOP at 1 FLOP/s exceeds the largest time, 18446744.073709551615 s");
}

TEST(UnitsArithmetic, FactoriesRejectNegativeAndNonFinite)
{
    EXPECT_EQ(errorOf([] { Frequency::fromHz(-1); }),
              "a frequency of -1 is not allowed: it must be finite and not negative");
    EXPECT_EQ(errorOf([] { Frequency::fromHz(std::nan("")); }),
              "a frequency of NaN is not allowed: it must be finite and not negative");
    EXPECT_EQ(errorOf([] { Bandwidth::fromBytesPerSecond(HUGE_VAL); }),
              "a bandwidth of inf is not allowed: it must be finite and not negative");
    EXPECT_EQ(errorOf([] { FlopRate::fromFlopsPerSecond(-2.5); }),
              "a FLOP rate of -2.5 is not allowed: it must be finite and not negative");
    EXPECT_EQ(errorOf([] { (void)(Bandwidth::parse("1 GB/s") * -1.0); }),
              "a bandwidth of -1000000000 is not allowed: it must be finite and not negative");
}

// ---- sc_time ----------------------------------------------------------------------------

using UnitsScTime = test::ScTest;

TEST_F(UnitsScTime, DefaultPicosecondResolutionIsExact)
{
    EXPECT_EQ(toScTime(Time::parse("700 ns")), sc_core::sc_time(700, sc_core::SC_NS));
    EXPECT_EQ(toScTime(Time::fromPs(maxU64)).value(), maxU64);
    EXPECT_EQ(fromScTime(sc_core::sc_time(1.5, sc_core::SC_NS)), Time::fromPs(1500));
    EXPECT_EQ(fromScTime(sc_core::SC_ZERO_TIME), Time());
}

TEST_F(UnitsScTime, CoarserResolutionRoundsToNearestStep)
{
    sc_core::sc_set_time_resolution(1, sc_core::SC_NS);
    EXPECT_EQ(toScTime(Time::fromPs(1500)), sc_core::sc_time(2, sc_core::SC_NS));
    EXPECT_EQ(toScTime(Time::fromPs(1499)), sc_core::sc_time(1, sc_core::SC_NS));
    EXPECT_EQ(fromScTime(sc_core::sc_time(3, sc_core::SC_NS)), Time::fromPs(3000));
}

TEST_F(UnitsScTime, FinerResolutionRoundsToNearestPicosecond)
{
    sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
    EXPECT_EQ(toScTime(Time::fromPs(1)).value(), 1000u);
    EXPECT_EQ(fromScTime(sc_core::sc_time::from_value(1500)), Time::fromPs(2));
    EXPECT_EQ(fromScTime(sc_core::sc_time::from_value(1499)), Time::fromPs(1));
    EXPECT_EQ(errorOf([] { toScTime(Time::fromPs(maxU64)); }),
              "time 18446744.073709551615 s does not fit an sc_time at the kernel's time "
              "resolution of 1 fs");
}

TEST_F(UnitsScTime, SecondResolutionBeyondTheRangeOfTime)
{
    sc_core::sc_set_time_resolution(1, sc_core::SC_SEC);
    EXPECT_EQ(fromScTime(sc_core::sc_time(5, sc_core::SC_SEC)), Time::parse("5 s"));
    EXPECT_EQ(errorOf([] { fromScTime(sc_core::sc_time::from_value(20'000'000)); }),
              "sc_time 20000000 s exceeds the largest time, 18446744.073709551615 s");
}

} // namespace
} // namespace etsim
