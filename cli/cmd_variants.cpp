// `liftx variants FILE --size ... [--profile nvidia|amd|cpu|detect] [--limit N]
// [--sample N --seed S] [--out DIR] [--count]`: the variant space of a high-level stencil.
// Prints counts per lowering strategy and per rejection reason; `--out` writes each variant as a
// .lift file plus a .json sidecar with its launch, for `liftx run FILE --launch SIDECAR`.
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "cli/program_options.hpp"
#include "cli/progress.hpp"
#include "explore/rank.hpp"
#include "ir/parse/parser.hpp"
#include "rewrite/product.hpp"
#include "rewrite/reduction.hpp"
#include "rewrite/temporal.hpp"
#include "runtime/device.hpp"
#include "space/space.hpp"
#include "space/variant_filter.hpp"
#include "support/csv.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace liftx::cli {

namespace {

struct VariantsOptions {
  std::string file;
  std::string program;
  int64_t steps = 0;
  std::vector<std::string> sizes;
  std::string profile = "detect";
  int64_t limit = 0;
  int64_t sample = 0;
  uint64_t seed = 1;
  std::string out;
  bool count = false;
  int depth = 2;
  int64_t max_tile = 32;
  bool layouts = false;
  std::vector<std::string> where;
  bool quiet = false;
  std::string format = "table";
};

/// Writes `text` to `path` (a UserError when it cannot).
void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path);
  LIFTX_USER_CHECK(f, "cannot write {}", path.string());
  f << text;
}

} // namespace

void add_variants_command(CLI::App& app) {
  auto o = std::make_shared<VariantsOptions>();
  CLI::App* cmd = app.add_subcommand("variants", "Enumerate the variant space of a stencil");
  cmd->add_option("file", o->file, "high-level .lift source file")->required();
  cmd->add_option("--program", o->program, "definition (default: the last one)");
  cmd->add_option("--steps", o->steps, "iterate the program T times (see explore)");
  cmd->add_option("--size", o->sizes, "sizes: M=1024,N=1024")->required();
  add_profile_option(cmd, o->profile, "detect");
  cmd->add_option("--limit", o->limit, "stop after N variants");
  cmd->add_option("--sample", o->sample,
                  "a uniform random sample of N variants (of those --where keeps)");
  cmd->add_option("--seed", o->seed, "seed of the sample (default 1)");
  cmd->add_option("--out", o->out, "write each variant as DIR/<index>-<strategy>.lift + .json");
  cmd->add_flag("--count", o->count, "only print the counts");
  cmd->add_flag("--quiet", o->quiet, "no progress line while the space is enumerated");
  cmd->add_option("--depth", o->depth, "high-level rewrite depth (default 2)");
  cmd->add_option("--max-tile", o->max_tile, "largest tile step / split factor (default 32)");
  cmd->add_flag("--layouts", o->layouts,
                "also try the grids of one type stored together: AoS and AoSoA(32) (MATOG's "
                "layouts; the variants say \"aos\"/\"aosoa\" in their parameters)");
  cmd->add_option("--format", o->format,
                  "table (default), json or csv: the listed variants (the sample, or every "
                  "matching one up to --limit) with their launches on stdout, as data; the "
                  "report then goes to stderr")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--where", o->where,
                  "keep only variants with KEY=V1|V2 (strategy, tied, local, global or a "
                  "parameter such as tile_x, tile_y, vector; `none` = the parameter is absent); "
                  "repeatable, all must hold");
  cmd->callback([o] {
    std::vector<space::VariantFilter> filters;
    for (const std::string& w : o->where)
      filters.push_back(space::parse_variant_filter(w));
    ir::Module module = parse::parse_file(o->file);
    const ir::Program program =
        iterate_steps(select_program(module, o->program, o->file), o->steps, o->file);
    Sizes sizes = bind_sizes(program, o->sizes);
    space::SpaceOptions options;
    options.sizes = sizes;
    options.device = runtime::named_profile(o->profile).limits();
    options.depth = o->depth;
    options.max_tile = o->max_tile;
    options.layouts = o->layouts;
    space::VariantStream stream(program, options);
    // Machine-readable output: one row per listed variant (CSV streams them as they come).
    const bool as_data = o->format != "table";
    std::FILE* report = as_data ? stderr : stdout;
    nlohmann::json rows = nlohmann::json::array();
    if (o->format == "csv" && !o->count)
      fmt::print("index,strategy,parameters,dims,global,local,tied\n");
    // The columns and their forms are those of `liftx db --csv`.
    auto list = [&](const space::Variant& v) {
      if (!as_data || o->count)
        return;
      if (o->format == "csv") {
        fmt::print("{},{},{},{},{},{},{}\n", v.index, v.strategy,
                   csv_quote(nlohmann::json(v.parameters).dump()), v.launch.dims,
                   space::launch_sizes_text(v.launch.global, v.launch.dims),
                   space::launch_sizes_text(v.launch.local, v.launch.dims),
                   v.launch.tied ? "true" : "false");
        return;
      }
      nlohmann::json row = nlohmann::json::parse(space::sidecar_json(v, options.sizes));
      row.erase("sizes"); // once, in the document
      row["index"] = v.index;
      rows.push_back(std::move(row));
    };
    std::vector<space::Variant> chosen;
    ActivityPrinter progress(o->quiet);
    int64_t walked = 0;
    auto walk = [&] {
      if (++walked % 4096 == 0)
        progress.update("enumerating", walked);
    };
    if (o->sample > 0) {
      // A uniform sample of the variants that match.
      int64_t matching = 0;
      chosen = space::sample(stream, o->sample, o->seed, [&](const space::Variant& v) {
        walk();
        const bool kept = space::matches(v, filters);
        matching += kept;
        return kept;
      });
      progress.finish();
      for (const space::Variant& v : chosen)
        list(v);
      if (!filters.empty())
        fmt::print(report, "matching  {} variants (--where), {} sampled\n", matching,
                   chosen.size());
    } else {
      space::Variant v;
      int64_t kept = 0;
      while ((o->limit <= 0 || kept < o->limit) && stream.next(v)) {
        walk();
        if (!space::matches(v, filters))
          continue;
        ++kept;
        list(v);
        if (!o->out.empty())
          chosen.push_back(v);
      }
      progress.finish();
      if (!filters.empty())
        fmt::print(report, "matching  {} variants (--where)\n", kept);
    }
    if (!o->out.empty() && !o->count) {
      std::filesystem::create_directories(o->out);
      for (const space::Variant& v : chosen) {
        std::string stem = fmt::format("{}-{}", v.index, v.strategy);
        ir::Module m{module.userfuns, {v.program}};
        write_file(std::filesystem::path(o->out) / (stem + ".lift"), ir::print(m));
        write_file(std::filesystem::path(o->out) / (stem + ".json"),
                   space::sidecar_json(v, options.sizes));
      }
    }
    const space::SpaceCounts& c = stream.counts();
    fmt::print(report, "program   {} ({}), sizes {}, device profile {}\n", program.name, o->file,
               format_sizes(sizes), o->profile);
    fmt::print(report,
               "variants  {}  (distinct kernel sources {}, lowered programs {}, high-level "
               "programs {})\n",
               c.variants, c.distinct_sources, c.lowered_programs, c.high_level_programs);
    if (!o->out.empty() && !o->count)
      fmt::print(report, "written   {} variants to {}\n", chosen.size(), o->out);
    fmt::print(report, "per lowering strategy:\n");
    // Each strategy with the steps that lowered its variants (the same data lower() runs).
    for (const auto& [k, n] : c.per_strategy) {
      std::string steps = k == rewrite::kTemporalStrategy        ? rewrite::kTemporalSteps
                          : k == rewrite::kTemporalStrategy3D    ? rewrite::kTemporalSteps3D
                          : k == rewrite::kReductionStrategy     ? rewrite::kReductionSteps
                          : k == rewrite::kRegisterBlockStrategy ? rewrite::kRegisterBlockSteps
                                                                 : "";
      for (const rewrite::LoweringStrategy& strategy : rewrite::lowering_strategies())
        if (strategy.name == k)
          steps = rewrite::describe(strategy);
      fmt::print(report, "  {:<24} {:<9} {}\n", k, n, steps);
    }
    fmt::print(report, "rejections:\n");
    for (const auto& [k, n] : c.rejections)
      fmt::print(report, "  {:<48} {}\n", k, n);
    if (o->format == "json") {
      nlohmann::json per_strategy = nlohmann::json::object(), rejections = nlohmann::json::object();
      for (const auto& [k, n] : c.per_strategy)
        per_strategy[k] = n;
      for (const auto& [k, n] : c.rejections)
        rejections[k] = n;
      fmt::print("{}\n", nlohmann::json{{"program", program.name},
                                        {"file", o->file},
                                        {"sizes", options.sizes},
                                        {"profile", o->profile},
                                        {"space",
                                         {{"variants", c.variants},
                                          {"distinct_sources", c.distinct_sources},
                                          {"lowered_programs", c.lowered_programs},
                                          {"high_level_programs", c.high_level_programs},
                                          {"per_strategy", per_strategy},
                                          {"rejections", rejections}}},
                                        {"variants", rows}}
                             .dump(2));
    }
  });
}

} // namespace liftx::cli
