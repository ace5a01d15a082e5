// Units and conversions, in one place. Internally trainsim works in SI base units: bytes, seconds,
// FLOP, FLOP/s and bytes/s. Files and reports use the units people read (GiB of memory, TB/s of
// HBM bandwidth, Gb/s of NIC line rate, microseconds of latency); these helpers convert at the
// boundary so no other file spells out 1024.0 * 1024.0 * 1024.0 or 1e9 / 8.
//
// Conventions: memory capacities and footprints are binary (KiB, MiB, GiB); bandwidths and rates
// are decimal, as vendors quote them (GB/s = 1e9 bytes/s, Gb/s = 1e9 bits/s, TFLOP/s = 1e12).
#pragma once

namespace trainsim::units {

// Binary sizes (memory capacities, footprints).
inline constexpr double kKiB = 1024.0;
inline constexpr double kMiB = 1024.0 * kKiB;
inline constexpr double kGiB = 1024.0 * kMiB;
inline constexpr double kTiB = 1024.0 * kGiB;

// Decimal sizes and prefixes (bandwidths, FLOP counts, vendor-quoted rates).
inline constexpr double kKB = 1e3;
inline constexpr double kMB = 1e6;
inline constexpr double kGB = 1e9;
inline constexpr double kTB = 1e12;
inline constexpr double kGiga = 1e9;
inline constexpr double kTera = 1e12;

// Time, in seconds.
inline constexpr double kNs = 1e-9;
inline constexpr double kUs = 1e-6;
inline constexpr double kMs = 1e-3;
inline constexpr double kUsPerS = 1e6;
inline constexpr double kMsPerS = 1e3;

inline constexpr double kBitsPerByte = 8.0;

// Bytes per element of the storage formats the graph uses.
inline constexpr double kFp32Bytes = 4.0;
inline constexpr double kBf16Bytes = 2.0;  // also fp16
inline constexpr double kFp8Bytes = 1.0;
inline constexpr double kFp4Bytes = 0.5;

// Memory sizes.
constexpr double BytesToGiB(double bytes) {
  return bytes / kGiB;
}
constexpr double GiBToBytes(double gib) {
  return gib * kGiB;
}
constexpr double BytesToMiB(double bytes) {
  return bytes / kMiB;
}

// Rates. Gb/s (bits, NIC line rates) and GB/s (bytes, NVLink / PCIe) differ by a factor of 8.
constexpr double GbpsToBytesPerS(double gbit_per_s) {
  return gbit_per_s * kGiga / kBitsPerByte;
}
constexpr double BytesPerSToGbps(double bytes_per_s) {
  return bytes_per_s * kBitsPerByte / kGiga;
}
constexpr double GBpsToBytesPerS(double gbyte_per_s) {
  return gbyte_per_s * kGB;
}
constexpr double BytesPerSToGBps(double bytes_per_s) {
  return bytes_per_s / kGB;
}
constexpr double TBpsToBytesPerS(double tbyte_per_s) {
  return tbyte_per_s * kTB;
}
constexpr double BytesPerSToTBps(double bytes_per_s) {
  return bytes_per_s / kTB;
}
constexpr double TflopsToFlops(double tflop_per_s) {
  return tflop_per_s * kTera;
}
constexpr double FlopsToTflops(double flop_per_s) {
  return flop_per_s / kTera;
}

// Times.
constexpr double UsToS(double us) {
  return us * kUs;
}
constexpr double SToUs(double s) {
  return s * kUsPerS;
}
constexpr double SToMs(double s) {
  return s * kMsPerS;
}

}  // namespace trainsim::units
