// Quantities with units in user files (CONVENTIONS.md #5). Inside the code everything is an SI
// base unit in a double: bytes, seconds, bytes/s, FLOP/s. Bits and bytes are never confused:
// "Gbps" and "Gb/s" are bits per second, "GBps" and "GB/s" bytes per second, and a memory size
// written in bits ("80Gb") is rejected rather than guessed.
#pragma once

#include <string>
#include <string_view>

namespace trainsim::units {

enum class Kind { kBytes, kBandwidth, kTime, kFlops, kCount };

// Parses "80GiB", "200Gbps", "1.5us", "312TFLOPS", or a plain number in SI base units.
// Throws ScenarioError(path, ...) naming the accepted units on anything else.
double parse(std::string_view text, Kind kind, const std::string& path);

// The units accepted for a kind, for error messages and --help.
std::string accepted_units(Kind kind);

// Human-readable formatting for reports ("74.2 GiB", "3.51 s", "25 GB/s", "312 TFLOP/s").
std::string format_bytes(double bytes);
std::string format_time(double seconds);
std::string format_bandwidth(double bytes_per_s);
std::string format_flops(double flops_per_s);
// Data volumes in decimal units ("3.4 GB" of gradients, a "2.1 TB" checkpoint), as link and
// storage rates are stated; memory on the GPU is printed with format_bytes in GiB.
std::string format_bytes_si(double bytes);
// Counts and rates with thousands separators: 156834.2 -> "156,834".
std::string format_count(double value);

}  // namespace trainsim::units
