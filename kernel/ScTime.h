#pragma once
// Conversions between etsim's Time (kernel/Units.h, plain C++) and SystemC's sc_time. They live
// apart from the units so that code without a SystemC kernel (the peer side, topology and
// routing, configuration) never includes SystemC.

#include "kernel/Units.h"

#include <systemc>

#include <cstdint>

namespace etsim {

/// Converts an sc_time, rounding to the nearest ps when the kernel's time resolution is finer
/// than 1 ps. Throws UnitError if the result exceeds the range of Time.
Time fromScTime(const sc_core::sc_time& time);

/// The same time as an sc_time in the current kernel's time resolution, rounded to the nearest
/// resolution step when the resolution is coarser than 1 ps. Like any non-zero sc_time, this
/// fixes the kernel's time resolution. Throws UnitError if the time does not fit sc_time at a
/// resolution finer than 1 ps.
sc_core::sc_time toScTime(Time time);

/// Simulated time in integer picoseconds, exact for sc_time resolutions of 1 ps or coarser
/// (finer resolutions truncate).
std::uint64_t toPicoseconds(const sc_core::sc_time& time);

} // namespace etsim
