// `liftx features FILE|DIR --profile P --size ... [--global X,Y] [--local X,Y]
// [--format csv|json]`: the static features of lowered programs (docs/features.md), one row per
// program. A directory gives one row per .lift file in it (sorted); a sidecar `NAME.json` or
// `NAME.lift.json` beside a file, holding {"global": [...], "local": [...]}, sets its launch where
// --global and --local do not.
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "exec/program_binding.hpp"
#include "exec/run.hpp"
#include "features/features.hpp"
#include "ir/parse/parser.hpp"
#include "perfdb/launch_file.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <iostream>
#include <utility>

namespace liftx::cli {

namespace {

namespace fs = std::filesystem;

struct FeaturesOptions {
  std::string path;
  std::string program;
  std::string profile = "detect";
  std::vector<std::string> sizes;
  std::string global;
  std::string local;
  std::string format = "csv";
};

/// The launch of `file`: the command line's sizes where given, else its sidecar's.
exec::RunOptions launch_for(const fs::path& file, const FeaturesOptions& o) {
  exec::RunOptions options;
  options.global = parse_dims(o.global, "global");
  options.local = parse_dims(o.local, "local");
  return perfdb::launch_for(file, options);
}

} // namespace

void add_features_command(CLI::App& app) {
  auto o = std::make_shared<FeaturesOptions>();
  CLI::App* cmd = app.add_subcommand(
      "features", "Static features of lowered programs (one row per program; docs/features.md)");
  cmd->add_option("path", o->path, ".lift file, or a directory of them")->required();
  cmd->add_option("--program", o->program, "definition (default: the last one of each file)");
  add_profile_option(cmd, o->profile, "detect");
  cmd->add_option("--size", o->sizes, "sizes: N=64,M=48, or 64 for every size")->required();
  cmd->add_option("--global", o->global,
                  "global size X[,Y[,Z]] (default: a sidecar NAME.json's, else tied to the "
                  "lengths)");
  cmd->add_option("--local", o->local,
                  "local size X[,Y[,Z]] (default: a sidecar NAME.json's, else the kernel's or "
                  "auto)");
  cmd->add_option("--format", o->format, "csv (default) or json")
      ->check(CLI::IsMember({"csv", "json"}));
  cmd->callback([o] {
    target::DeviceProfile profile = runtime::named_profile(o->profile);
    exec::parse_size_options(o->sizes); // malformed --size values are the user's, not one file's
    std::vector<fs::path> files = exec::lift_files_at(o->path);
    const bool many = files.size() > 1 || fs::is_directory(o->path);
    nlohmann::json rows = nlohmann::json::array();
    bool failed = false;
    bool header_printed = false; // after the first good row: bad input prints no table
    for (const fs::path& file : files) {
      try {
        ir::Module module = parse::parse_file(file.string());
        const ir::Program& program = exec::select_program(module, o->program, file.string());
        Sizes sizes = exec::bind_sizes(program, o->sizes);
        features::Features f =
            features::compute(program, sizes, launch_for(file, *o).request(), profile);
        if (o->format == "csv") {
          if (!std::exchange(header_printed, true))
            fmt::print("{}\n", features::csv_header());
          fmt::print("{}\n", features::csv_row(file.string(), f));
        } else {
          nlohmann::json row = {{"program", program.name}, {"file", file.string()}};
          row.update(features::to_json(f));
          rows.push_back(std::move(row));
        }
      } catch (const UserError& e) {
        if (!many)
          throw;
        // A directory: report the file and go on with the others.
        fmt::print(stderr, "{}: {}\n", file.string(), e.what());
        failed = true;
      }
    }
    if (o->format == "json")
      fmt::print("{}\n", rows.dump(2));
    if (failed)
      throw RunFailed();
  });
}

} // namespace liftx::cli
