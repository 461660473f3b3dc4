#pragma once
/// The targets of a collection or a calibration from the files and size values a user gives: each
/// file parsed once, its program chosen and its sizes bound as every command binds them
/// (exec/program_binding.hpp).
#include "explore/calibrate.hpp"
#include "explore/collect.hpp"

#include <string>
#include <vector>

namespace liftx::explore {

/// Every program (`program_name` of each file, or its main one) at every size set, size set by
/// size set, so that a run cut short has every stencil at the first sizes. `check_size` (a size
/// set bound the same way; empty: none) is where each target is verified
/// (CollectTarget::check_sizes): none for a target of those very sizes; a UserError for a
/// target it does not fit in.
std::vector<CollectTarget> collect_targets(const std::vector<std::string>& files,
                                           const std::string& program_name,
                                           const std::vector<std::string>& size_sets,
                                           const std::string& check_size = "");

/// Parses the stencils and binds each to every size of the design, size by size (one entry per
/// file each), as calibration_targets takes them. A design size n gives every size variable of
/// a program with two of them the extent n, and others about as many points (n³ would be far
/// more): n² for one, 64 per extent of a three-variable program at n = 1024, 128 at 2048
/// (DeviceDefaults::extent).
std::vector<Sizes> sizes_per_file(const std::vector<std::string>& files,
                                  const CalibrationDesign& design);

} // namespace liftx::explore
