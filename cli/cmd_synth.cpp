// `liftx synth --count N --seed S --out DIR [--kind K] [--shapes star,box,...] [--max-radius R]
// [--max-grids G]`: writes N synthetic programs of kind K (2D stencils by default)
// DIR/<name>.lift (docs/synth.md) and prints one line per file, its name and description.
#include "cli/app.hpp"
#include "support/error.hpp"
#include "synth/synth.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace liftx::cli {

namespace {

std::vector<synth::Shape> parse_shapes(const std::string& text) {
  std::vector<synth::Shape> shapes;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty())
      continue;
    std::optional<synth::Shape> shape = synth::parse_shape(item);
    LIFTX_USER_CHECK(shape,
                     "--shapes: unknown shape '{}' (star, box, cross, diamond or "
                     "asymmetric)",
                     item);
    if (std::find(shapes.begin(), shapes.end(), *shape) == shapes.end())
      shapes.push_back(*shape);
  }
  LIFTX_USER_CHECK(!shapes.empty(),
                   "--shapes: no shape given (star, box, cross, diamond or asymmetric)");
  return shapes;
}

} // namespace

void add_synth_command(CLI::App& app) {
  struct Options {
    int64_t count = 0;
    uint64_t seed = 1;
    std::string out;
    std::string shapes;
    int max_radius = 3;
    int max_grids = 6;
    std::string kind = "stencil2d";
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "synth", "Write random synthetic programs (.lift): 2D stencils, or another kind (--kind)");
  cmd->add_option("--count", o->count, "how many programs")->required();
  cmd->add_option("--seed", o->seed, "seed of the draw (default 1)");
  cmd->add_option("--out", o->out,
                  "folder of the files DIR/synth_<seed>_<i>.lift (other kinds: "
                  "DIR/synth_<kind>_<seed>_<i>.lift)")
      ->required();
  cmd->add_option("--kind", o->kind,
                  "what to write: stencil2d (default), stencil3d, time_steps, multi_output, "
                  "layout, reduction or product");
  cmd->add_option("--shapes", o->shapes,
                  "shapes to draw from, comma separated: star, box, cross, diamond, asymmetric "
                  "(default all)");
  CLI::Option* max_radius =
      cmd->add_option("--max-radius", o->max_radius, "largest radius, 1 to 3 (default 3)");
  CLI::Option* max_grids =
      cmd->add_option("--max-grids", o->max_grids, "most input grids, 1 to 6 (default 6)");
  CLI::Option* shapes = cmd->get_option("--shapes");
  cmd->callback([o, shapes, max_radius, max_grids] {
    const std::optional<synth::Kind> kind = synth::parse_kind(o->kind);
    LIFTX_USER_CHECK(kind,
                     "--kind: unknown kind '{}' (stencil2d, stencil3d, time_steps, multi_output, "
                     "layout, reduction or product)",
                     o->kind);
    const bool stencil = *kind != synth::Kind::reduction && *kind != synth::Kind::product;
    LIFTX_USER_CHECK(
        stencil || (shapes->count() == 0 && max_radius->count() == 0 && max_grids->count() == 0),
        "--shapes, --max-radius and --max-grids describe stencils, not the kind {}", o->kind);
    LIFTX_USER_CHECK(o->count >= 1 && o->count <= 1000000, "--count must be 1 to 1000000, got {}",
                     o->count);
    LIFTX_USER_CHECK(o->max_radius >= 1 && o->max_radius <= 3,
                     "--max-radius must be 1 to 3, got {}", o->max_radius);
    LIFTX_USER_CHECK(o->max_grids >= 1 && o->max_grids <= 6, "--max-grids must be 1 to 6, got {}",
                     o->max_grids);
    synth::SynthOptions options;
    if (!o->shapes.empty())
      options.shapes = parse_shapes(o->shapes);
    options.max_radius = o->max_radius;
    options.max_grids = o->max_grids;
    std::error_code ec;
    std::filesystem::create_directories(o->out, ec);
    LIFTX_USER_CHECK(!ec, "cannot create {}: {}", o->out, ec.message());
    for (int64_t i = 0; i < o->count; ++i) {
      const int index = static_cast<int>(i);
      const synth::ProgramSpec program = synth::generate_program(*kind, o->seed, index, options);
      const std::string name = synth::program_name(*kind, o->seed, index);
      const std::filesystem::path path = std::filesystem::path(o->out) / (name + ".lift");
      std::ofstream file(path);
      file << synth::to_lift(program, name);
      LIFTX_USER_CHECK(file, "cannot write {}", path.string());
      fmt::print("{}  {}\n", name, synth::describe(program));
    }
  });
}

} // namespace liftx::cli
