#pragma once
/// Launch sidecars read from files: the `.json` beside a variant (`liftx variants --out`,
/// `liftx explore --out DIR`'s best.json) that `liftx run --launch` and `liftx features` take.
#include "exec/run.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace liftx::perfdb {

/// A launch sidecar file: its launch, and the sizes the launch was made for as NAME=VALUE
/// bindings (`explore --out DIR` and `variants --out` write them; empty when it holds none).
struct LaunchFile {
  exec::RunOptions launch;
  std::vector<std::string> sizes;
  /// "tied": true: the global size is the kernel's launch rule's at `sizes` (threads tied to the
  /// mapped lengths), so at other sizes the rule gives it again.
  bool tied = false;
};

/// UserError when `path` cannot be read or is not a launch sidecar.
LaunchFile read_launch_file(const std::string& path);

/// The launch of the lowered program `file`: `options` (the command line's global and local
/// sizes) where given, the rest from its sidecar `NAME.json` or `NAME.lift.json`, holding
/// {"global": [...], "local": [...]}, where one exists (given sizes win, as `liftx run --launch`
/// lets them).
exec::RunOptions launch_for(const std::filesystem::path& file, exec::RunOptions options);

} // namespace liftx::perfdb
