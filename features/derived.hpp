#pragma once
/// Features that carry across sizes, stencils and devices, derived from the static features of
/// one launch (features.hpp) and the device's throughput (target::DeviceProfile::throughput()):
///
/// - size-free ratios: what a launch does per byte the program must move (cache-line bytes, useful
///   bytes, operations, local-memory bytes, work-items, work-groups, barriers), and how its
///   work-groups fill the device (waves, tail, compute units);
/// - analytic roofline terms: the time of the cache-line traffic, the local-memory traffic and the
///   arithmetic, each in units of the program's ideal time (its bytes at DRAM bandwidth), and the
///   roofline estimate they make together with the parallel efficiency.
///
/// Per-thread counts grow with the input for a fixed thread count, and absolute sizes make a new
/// input a new region of feature space; these ratios stay put when only the size changes, which is
/// what lets a model trained at 2048² rank at 8192². They are computed when a dataset is loaded and
/// when a space is ranked, never stored: the throughput constants may be refined later.
/// docs/features.md defines each one.
#include "features/features.hpp"
#include "target/profile.hpp"

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace liftx::features {

struct DerivedColumn {
  std::string name;
  std::string unit;
  std::string description;
};

/// The derived columns, in the order derived_values() gives them.
const std::vector<DerivedColumn>& derived_columns();

std::vector<double> derived_values(const Features& features,
                                   const target::DeviceProfile::Throughput& device);
/// derived_values() appended to `out` (no allocation once `out` has room: ranking's inner loop).
void append_derived_values(const Features& features,
                           const target::DeviceProfile::Throughput& device,
                           std::vector<double>& out);

/// Every column a model may use, as ranking and datasets see them: columns(), then
/// derived_columns(); all_values() gives one launch's values in that order.
std::vector<std::string> all_names();
std::vector<double> all_values(const Features& features,
                               const target::DeviceProfile::Throughput& device);
/// all_values() into `out` (cleared first; no allocation once it has room: ranking's inner loop).
void all_values_into(const Features& features, const target::DeviceProfile::Throughput& device,
                     std::vector<double>& out);

/// The modelled global-memory traffic of a launch per byte the program must move: every warp's
/// global accesses at cache-line granularity (Features::cache_lines_per_warp_access lines of
/// `cache_line_bytes` each), with the warps the work-groups actually hold (a work-group of 8
/// work-items is one warp, not a quarter of one). Reuse within a work-item (register windows,
/// tiles) lowers the accesses counted; reuse between warps through the caches is not modelled.
/// Traffic pruning (seed 004) compares it within one program and input.
double modelled_traffic_per_byte(const Features& features,
                                 const target::DeviceProfile::Throughput& device);

/// The features of one launch from its column values (names of columns(), as the performance
/// database stores them). UserError naming the first missing or non-numeric column.
Features features_from_columns(const nlohmann::json& columns);

} // namespace liftx::features
