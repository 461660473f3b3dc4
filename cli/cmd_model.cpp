// Cost-model commands (evaluate: cmd_evaluate.cpp, explore: cmd_explore.cpp):
//   liftx train --db DB [--device-key KEY] [--profile P] [--kind knn|tree|boosted] -o FILE
//   liftx rank FILE [--model M] --size ... [--profile P] [--top K] [--format table|csv|json]
#include "cli/app.hpp"
#include "cli/model_options.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "codegen/kernel.hpp"
#include "exec/program_binding.hpp"
#include "explore/models.hpp"
#include "explore/rank.hpp"
#include "explore/rank_report.hpp"
#include "ir/host_iteration.hpp"
#include "ir/parse/parser.hpp"
#include "perfdb/dataset.hpp"
#include "perfdb/db.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"
#include "support/output_file.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

namespace liftx::cli {

namespace {

namespace fs = std::filesystem;

// ---- train --------------------------------------------------------------------------------------

void add_train(CLI::App& app) {
  auto o = std::make_shared<DataOptions>();
  auto output = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  auto extra = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand("train", "Train a cost model from the performance database");
  add_data_options(cmd, *o);
  cmd->add_option("-o,--output", *output, "model file to write (JSON)")->required();
  cmd->add_option("--add-db", *extra,
                  "also learn from DB (its only device) or DB@DEVICE_KEY, with features of the "
                  "same profile: several devices' measurements in one model (repeatable)");
  cmd->add_flag("--quiet", *quiet, "no progress lines (on stderr)");
  cmd->callback([o, output, quiet, extra] {
    const auto step = step_lines("train", *quiet);
    std::vector<fs::path> databases{o->db.empty() ? perfdb::PerfDb::default_path()
                                                  : fs::path(o->db)};
    for (const std::string& spec : *extra)
      databases.emplace_back(spec.substr(0, spec.rfind('@')));
    refuse_overwriting_input(*output, databases, "--output");
    if (step)
      step("reading the database");
    perfdb::LoadedData loaded = load_data(*o);
    nlohmann::json sources = nlohmann::json::array(
        {{{"database", fs::absolute(loaded.db_path).string()}, {"device", loaded.device_key}}});
    std::set<std::string> devices{loaded.device_key};
    for (const perfdb::AddedSource& added : perfdb::add_databases(loaded, *extra, o->profile)) {
      devices.insert(added.device_key);
      sources.push_back(
          {{"database", fs::absolute(added.db_path).string()}, {"device", added.device_key}});
    }
    loaded.data = model::select_columns(loaded.data, o->columns(loaded.data.feature_names));
    if (step)
      step(fmt::format("training a {} model on {} samples", o->kind, loaded.data.samples.size()));
    model::Model m = model::train(loaded.data, model::parse_kind(o->kind), o->train_options());
    m.profile = o->profile;
    std::set<std::string> programs;
    int ok = 0;
    for (const model::Sample& s : loaded.data.samples) {
      programs.emplace(model::stencil_of(s.program));
      ok += s.time_ms.has_value();
    }
    m.provenance = {{"database", fs::absolute(loaded.db_path).string()},
                    {"device", loaded.device_key},
                    {"sources", sources},
                    {"programs", std::vector<std::string>(programs.begin(), programs.end())},
                    {"samples", ok},
                    {"failed_measurements_skipped", int(loaded.data.samples.size()) - ok},
                    {"trained", perfdb::utc_timestamp()},
                    {"liftx", "0.1.0"}};
    m.save(*output);
    fmt::print("trained   {} model on {} successful measurements of {} programs (device{} {}, "
               "profile {})\n",
               o->kind, ok, programs.size(), devices.size() > 1 ? "s" : "",
               fmt::join(devices, ", "), o->profile);
    fmt::print("features  {} columns, {} vary", m.feature_names().size(),
               m.standardiser().kept.size());
    if (m.kind() == model::Kind::knn)
      fmt::print(", {} principal components keep {:.1f}% of the variance", m.pca().basis.cols(),
                 m.pca().variance_kept.sum() * 100);
    else if (m.kind() == model::Kind::boosted)
      fmt::print(", {} boosted trees ({})", m.options().trees,
                 model::to_string(m.options().objective));
    else
      fmt::print(", tree of {} nodes", m.tree().size());
    fmt::print("\nwritten   {}\n", *output);
  });
}

// ---- rank ---------------------------------------------------------------------------------------

struct RankCommandOptions {
  std::string file;
  std::string program;
  std::string model;
  std::vector<std::string> sizes;
  std::string profile;
  int top = 20;
  std::string format = "table";
  std::string out;
  int64_t sample = 0;
  uint64_t seed = 1;
  double prune_traffic = 0;
  bool layouts = false;
  bool warp_streams = false;
  bool quiet = false;
};

void add_rank_options(CLI::App* cmd, RankCommandOptions& o) {
  cmd->add_option("file", o.file, "high-level .lift stencil")->required();
  cmd->add_option("--program", o.program, "definition (default: the last one)");
  cmd->add_option("--model", o.model,
                  "model file (liftx train; default: the shipped one, or the calibrated one, for "
                  "--profile's kind of device, as explore finds it)");
  cmd->add_option("--size", o.sizes, "sizes: N=64,M=48, or 64 for every size")->required();
  add_profile_option(cmd, o.profile,
                     "the model's; or FILE.json, a device's own profile saved by `liftx devices "
                     "--format json` on its machine");
  cmd->add_option("--top", o.top, "rows to print (0 = all; default 20)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--format", o.format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("--sample", o.sample,
                  "rank a fixed-seed uniform sample of this many variants (default 0 = all)");
  cmd->add_flag("--quiet", o.quiet, "no progress line while ranking");
  cmd->add_option("--seed", o.seed, "seed of --sample (default 1)");
  cmd->add_option("--prune-traffic", o.prune_traffic,
                  "rank only the variants whose modelled global-memory traffic is at most F "
                  "times the least (F >= 1; default 0: rank all)");
  cmd->add_flag("--layouts", o.layouts,
                "also try the grids of one type stored together: AoS and AoSoA(32) (MATOG's "
                "layouts; the variants say \"aos\"/\"aosoa\" in their parameters)");
  add_warp_streams_flag(cmd, o.warp_streams);
  cmd->add_option("--out", o.out,
                  "also write the rows shown as DIR/<rank>-<index>-<strategy>.lift + .json");
}

/// The table `liftx rank` prints by default: what was ranked, how, and the best rows.
void print_rank_table(const RankCommandOptions& o, const ir::Program& program,
                      const model::Model& m, const explore::RankOptions& options,
                      const explore::RankReport& report) {
  const explore::RankResult& result = report.result;
  const std::string route = explore::route_of(m, program);
  fmt::print("program   {} ({}), sizes {}, model {} ({}, profile {}{})\n", program.name, o.file,
             exec::format_sizes(options.sizes), o.model,
             model::to_string(explore::model_for(m, program).kind()),
             explore::rank_profile_description(options, m, o.profile),
             route.empty() ? "" : fmt::format("; its route for {} programs", route));
  fmt::print("ranked    {} variants in {:.3f} s; predicted normalised throughput (1 = as fast "
             "as the best of its program and input{})\n",
             result.variants, report.seconds,
             ir::host_iteration(program) ? "; per step: a fused launch counts its steps" : "");
  if (options.prune_traffic > 0)
    fmt::print("pruned    {} of the {} variants: modelled traffic above {:.3g} x the least "
               "({:.3g} cache-line bytes per byte moved)\n",
               result.pruned, result.variants, options.prune_traffic, result.least_traffic);
  fmt::print("{:>5} {:>9} {:>6}  {:<36} {:<34} {}\n", "rank", "predicted", "index",
             "strategy and parameters", "launch", "main features");
  for (const explore::RankedVariant& r : result.ranked)
    fmt::print("{:>5} {:>9.3f} {:>6}  {:<36} {:<34} {}\n", r.rank, r.predicted, r.variant.index,
               explore::describe_parameters(r.variant), codegen::describe(r.variant.launch),
               explore::describe_reasons(r.reasons));
}

/// The model file `rank` uses: the one named, else the one explore would use on a device of the
/// requested profile (the first OpenCL device's when none is requested), with its notes.
std::string rank_model_path(const RankCommandOptions& o) {
  if (!o.model.empty())
    return o.model;
  target::DeviceProfile device;
  if (o.profile.empty()) {
    try {
      device = runtime::named_profile("detect");
    } catch (const UserError& e) {
      // Ranking needs no device: say how to rank for one that is not attached here.
      throw UserError(e.message() + "; without a device, name the model (--model FILE) or the "
                                    "kind of device to rank for (--profile nvidia|amd|cpu)");
    }
  } else {
    device = o.profile.ends_with(".json") ? explore::saved_device_profile(o.profile)
                                          : runtime::named_profile(o.profile);
  }
  const explore::FoundModel found = explore::find_model("", device);
  for (const std::string& note : found.notes)
    fmt::print(stderr, "note: {}\n", note);
  return found.path.string();
}

void run_rank(const RankCommandOptions& o_given) {
  RankCommandOptions o = o_given;
  o.model = rank_model_path(o_given);
  model::Model m = model::Model::load(o.model);
  ir::Module module = parse::parse_file(o.file);
  const ir::Program& program = exec::select_program(module, o.program, o.file);
  explore::refuse_lowered(program, o.file, "rank");
  explore::RankOptions options;
  options.sizes = exec::bind_sizes(program, o.sizes);
  explore::set_rank_profile(options, o.profile);
  ActivityPrinter progress(o.quiet);
  options.on_progress = [&](std::string_view phase, int64_t n) { progress.update(phase, n); };
  options.sample = o.sample;
  options.sample_seed = o.seed;
  options.keep = size_t(o.top); // the rows shown; 0 = all
  options.prune_traffic = o.prune_traffic;
  options.layouts = o.layouts;
  options.warp_streams = o.warp_streams;
  const explore::RankReport report = explore::timed_rank(program, m, options);
  progress.finish();
  if (!o.out.empty())
    explore::write_ranked_variants(o.out, module.userfuns, report.result.ranked, options.sizes);
  if (o.format == "json") {
    fmt::print("{}\n",
               explore::rank_document(program.name, report.result, o.model, options.prune_traffic)
                   .dump(2));
  } else if (o.format == "csv") {
    fmt::print("{}\n", explore::kRankCsvHeader);
    for (const explore::RankedVariant& r : report.result.ranked)
      fmt::print("{}\n", explore::rank_csv_row(r));
  } else {
    print_rank_table(o, program, m, options, report);
  }
}

void add_rank(CLI::App& app) {
  auto o = std::make_shared<RankCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "rank", "Rank every variant of a program with a cost model, without running any");
  add_rank_options(cmd, *o);
  cmd->callback([o] { run_rank(*o); });
}

} // namespace

void add_model_commands(CLI::App& app) {
  add_train(app);
  add_rank(app);
}

} // namespace liftx::cli
