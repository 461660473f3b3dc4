// `liftx variants FILE --size ... [--profile nvidia|amd|cpu|detect] [--limit N]
// [--sample N --seed S] [--out DIR] [--count]`: the variant space of a high-level stencil.
// Prints counts per lowering strategy and per rejection reason; `--out` writes each variant as a
// .lift file plus a .json sidecar with its launch, for `liftx run FILE --launch SIDECAR`.
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "cli/progress.hpp"
#include "exec/program_binding.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"
#include "space/space.hpp"
#include "space/variant_filter.hpp"
#include "space/variant_selection.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

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
  bool shared_streams = false;
  bool shifted_strips = false;
  bool warp_streams = false;
  std::vector<std::string> where;
  bool quiet = false;
  std::string format = "table";

  /// Machine-readable output: the listed variants go to stdout as data, the report to stderr.
  bool as_data() const { return format != "table"; }
  bool writes_files() const { return !out.empty() && !count; }
};

void add_variants_options(CLI::App* cmd, VariantsOptions& o) {
  cmd->add_option("file", o.file, "high-level .lift source file")->required();
  cmd->add_option("--program", o.program, "definition (default: the last one)");
  cmd->add_option("--steps", o.steps, "iterate the program T times (see explore)");
  cmd->add_option("--size", o.sizes, "sizes: M=1024,N=1024")->required();
  add_profile_option(cmd, o.profile, "detect");
  cmd->add_option("--limit", o.limit, "stop after N variants");
  cmd->add_option("--sample", o.sample,
                  "a uniform random sample of N variants (of those --where keeps)");
  cmd->add_option("--seed", o.seed, "seed of the sample (default 1)");
  cmd->add_option("--out", o.out, "write each variant as DIR/<index>-<strategy>.lift + .json");
  cmd->add_flag("--count", o.count, "only print the counts");
  cmd->add_flag("--quiet", o.quiet, "no progress line while the space is enumerated");
  cmd->add_option("--depth", o.depth, "high-level rewrite depth (default 2)");
  cmd->add_option("--max-tile", o.max_tile, "largest tile step / split factor (default 32)");
  cmd->add_flag("--layouts", o.layouts,
                "also try the grids of one type stored together: AoS and AoSoA(32) (MATOG's "
                "layouts; the variants say \"aos\"/\"aosoa\" in their parameters)");
  cmd->add_flag("--shared-streams", o.shared_streams,
                "also stream iterated stencils by work-groups sharing each fused step's rows in "
                "local memory (AN5D's blocking; the variants say \"shared\": 1; not in the "
                "default space: slower than the register pipelines as generated)");
  add_warp_streams_flag(cmd, o.warp_streams);
  cmd->add_flag("--shifted-strips", o.shifted_strips,
                "also plan full-warp streams at strip heights that need not divide the grid's, "
                "each column's last strip shifted up to the last row (the variants say "
                "\"shifted_rows\": 1; not in the default space: not yet measured on a GPU)");
  cmd->add_option("--format", o.format,
                  "table (default), json or csv: the listed variants (the sample, or every "
                  "matching one up to --limit) with their launches on stdout, as data; the "
                  "report then goes to stderr")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--where", o.where,
                  "keep only variants with KEY=V1|V2 (strategy, tied, local, global or a "
                  "parameter such as tile_x, tile_y, vector; `none` = the parameter is absent); "
                  "repeatable, all must hold");
}

/// Lists the variants `--format csv|json` asks for: CSV rows streamed as they come, JSON rows
/// held for the document printed at the end.
struct VariantLister {
  const VariantsOptions& o;
  const Sizes& sizes;
  nlohmann::json rows = nlohmann::json::array();

  void list(const space::Variant& v) {
    if (!o.as_data() || o.count)
      return;
    if (o.format == "csv")
      fmt::print("{}\n", space::variant_csv_row(v));
    else
      rows.push_back(space::variant_json_row(v, sizes));
  }
};

/// The report's lines after the walk: what the space holds, per strategy and per rejection.
void print_space_report(std::FILE* report, const VariantsOptions& o, const ir::Program& program,
                        const Sizes& sizes, const space::SpaceCounts& c, size_t written) {
  fmt::print(report, "program   {} ({}), sizes {}, device profile {}\n", program.name, o.file,
             exec::format_sizes(sizes), o.profile);
  fmt::print(report,
             "variants  {}  (distinct kernel sources {}, lowered programs {}, high-level "
             "programs {})\n",
             c.variants, c.distinct_sources, c.lowered_programs, c.high_level_programs);
  if (o.writes_files())
    fmt::print(report, "written   {} variants to {}\n", written, o.out);
  fmt::print(report, "per lowering strategy:\n");
  // Each strategy with the steps that lowered its variants (the same data lower() runs).
  for (const auto& [k, n] : c.per_strategy)
    fmt::print(report, "  {:<24} {:<9} {}\n", k, n, space::lowering_steps(k));
  fmt::print(report, "rejections:\n");
  for (const auto& [k, n] : c.rejections)
    fmt::print(report, "  {:<48} {}\n", k, n);
}

/// `--format json`: the space's counts and the listed variants as one document on stdout.
void print_json_document(const VariantsOptions& o, const ir::Program& program, const Sizes& sizes,
                         const space::SpaceCounts& c, const nlohmann::json& rows) {
  fmt::print("{}\n", nlohmann::json{{"program", program.name},
                                    {"file", o.file},
                                    {"sizes", sizes},
                                    {"profile", o.profile},
                                    {"space", space::counts_json(c)},
                                    {"variants", rows}}
                         .dump(2));
}

space::VariantSelection variant_selection(const VariantsOptions& o) {
  space::VariantSelection selection;
  for (const std::string& w : o.where)
    selection.filters.push_back(space::parse_variant_filter(w));
  selection.limit = o.limit;
  selection.sample = o.sample;
  selection.seed = o.seed;
  selection.hold_matches = !o.out.empty();
  return selection;
}

void run_variants(const VariantsOptions& o) {
  const space::VariantSelection selection = variant_selection(o);
  ir::Module module = parse::parse_file(o.file);
  const ir::Program program =
      exec::iterate_steps(exec::select_program(module, o.program, o.file), o.steps, o.file);
  space::SpaceOptions options;
  options.sizes = exec::bind_sizes(program, o.sizes);
  options.device = runtime::named_profile(o.profile).limits();
  options.depth = o.depth;
  options.max_tile = o.max_tile;
  options.layouts = o.layouts;
  options.shared_streams = o.shared_streams;
  options.warp_streams = o.warp_streams;
  options.shifted_strips = o.shifted_strips;
  space::VariantStream stream(program, options);
  std::FILE* report = o.as_data() ? stderr : stdout;
  if (o.format == "csv" && !o.count)
    fmt::print("{}\n", space::kVariantCsvHeader);
  VariantLister lister{o, options.sizes};
  ActivityPrinter progress(o.quiet);
  const space::SelectedVariants selected = space::select_variants(
      stream, selection, [&](const space::Variant& v) { lister.list(v); },
      [&](int64_t walked) { progress.update("enumerating", walked); });
  progress.finish();
  if (o.sample > 0)
    for (const space::Variant& v : selected.variants)
      lister.list(v);
  if (!selection.filters.empty() && o.sample > 0)
    fmt::print(report, "matching  {} variants (--where), {} sampled\n", selected.matching,
               selected.variants.size());
  else if (!selection.filters.empty())
    fmt::print(report, "matching  {} variants (--where)\n", selected.matching);
  if (o.writes_files())
    space::write_variant_files(o.out, module.userfuns, selected.variants, options.sizes);
  print_space_report(report, o, program, options.sizes, stream.counts(), selected.variants.size());
  if (o.format == "json")
    print_json_document(o, program, options.sizes, stream.counts(), lister.rows);
}

} // namespace

void add_variants_command(CLI::App& app) {
  auto o = std::make_shared<VariantsOptions>();
  CLI::App* cmd = app.add_subcommand("variants", "Enumerate the variant space of a stencil");
  add_variants_options(cmd, *o);
  cmd->callback([o] { run_variants(*o); });
}

} // namespace liftx::cli
