// `liftx features FILE|DIR --profile P --size ... [--global X,Y] [--local X,Y]
// [--format csv|json]`: the static features of lowered programs (docs/features.md), one row per
// program. A directory gives one row per .lift file in it (sorted); a sidecar `NAME.json` or
// `NAME.lift.json` beside a file, holding {"global": [...], "local": [...]}, sets its launch.
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "cli/program_options.hpp"
#include "exec/run.hpp"
#include "features/features.hpp"
#include "ir/parse/parser.hpp"
#include "perfdb/record.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
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

/// The launch of `file`: its sidecar's, else the command line's.
exec::RunOptions launch_for(const fs::path& file, const FeaturesOptions& o) {
  exec::RunOptions options;
  options.global = parse_dims(o.global, "global");
  options.local = parse_dims(o.local, "local");
  for (fs::path sidecar :
       {fs::path(file).replace_extension(".json"), fs::path(file.string() + ".json")}) {
    if (!fs::is_regular_file(sidecar))
      continue;
    std::ifstream in(sidecar);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    LIFTX_USER_CHECK(j.is_object(), "{}: expected {{\"global\": [...], \"local\": [...]}}",
                     sidecar.string());
    // What the sidecar leaves out comes from the command line; the launch is then checked like
    // every other launch liftx reads (1 to 3 sizes in range), naming the sidecar.
    nlohmann::json launch = nlohmann::json::object();
    launch["global"] = j.contains("global") ? j["global"] : nlohmann::json(options.global);
    if (j.contains("local"))
      launch["local"] = j["local"];
    else if (!options.local.empty())
      launch["local"] = options.local;
    if (!launch["global"].empty())
      return perfdb::run_options_for(launch, sidecar.string());
    try {
      options.local = j.value("local", std::vector<int64_t>{});
    } catch (const nlohmann::json::exception& e) {
      throw UserError(fmt::format("{}: expected {{\"global\": [...], \"local\": [...]}}: {}",
                                  sidecar.string(), e.what()));
    }
    break;
  }
  return options;
}

std::vector<fs::path> programs_at(const std::string& path) {
  LIFTX_USER_CHECK(fs::exists(path), "{}: no such file or directory", path);
  if (!fs::is_directory(path))
    return {fs::path(path)};
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(path))
    if (e.is_regular_file() && e.path().extension() == ".lift")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  LIFTX_USER_CHECK(!files.empty(), "{}: no .lift files", path);
  return files;
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
  cmd->add_option("--global", o->global, "global size X[,Y[,Z]] (default: tied to the lengths)");
  cmd->add_option("--local", o->local, "local size X[,Y[,Z]] (default: the kernel's or auto)");
  cmd->add_option("--format", o->format, "csv (default) or json")
      ->check(CLI::IsMember({"csv", "json"}));
  cmd->callback([o] {
    target::DeviceProfile profile = runtime::named_profile(o->profile);
    parse_size_options(o->sizes); // malformed --size values are the user's, not one file's
    std::vector<fs::path> files = programs_at(o->path);
    const bool many = files.size() > 1 || fs::is_directory(o->path);
    nlohmann::json rows = nlohmann::json::array();
    bool failed = false;
    bool header_printed = false; // after the first good row: bad input prints no table
    for (const fs::path& file : files) {
      try {
        ir::Module module = parse::parse_file(file.string());
        const ir::Program& program = select_program(module, o->program, file.string());
        Sizes sizes = bind_sizes(program, o->sizes);
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
