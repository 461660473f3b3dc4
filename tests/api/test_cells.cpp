// Grids of a Boost.Hana-reflected cell struct (liftx/cells.hpp): split into one array per member,
// run through kernels storing the grids apart, as AoS and as AoSoA blocks, and merged back; the
// same cells out in every layout. Only the public headers are included.
#include <liftx/cells.hpp>
#include <liftx/liftx.hpp>

#include "api_test_helpers.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace liftx;
using namespace liftx_api_test;

namespace {

struct Water {
  BOOST_HANA_DEFINE_STRUCT(Water, (float, h), (float, hu), (float, hv));
};

/// Cells of a lake: depths in [1, 2), small momenta (a well-posed step).
std::vector<Water> lake(size_t count, uint32_t seed) {
  std::vector<Water> cells(count);
  const std::vector<float> noise = random_grid(count * 3, seed);
  for (size_t i = 0; i < count; ++i)
    cells[i] = {1.5f + 0.5f * noise[3 * i], 0.1f * noise[3 * i + 1], 0.1f * noise[3 * i + 2]};
  return cells;
}

/// The step of `program` on `cells`, run on the separate grids by hand: the reference.
std::vector<std::vector<float>> step_apart(Context& ctx, const Program& program, const Sizes& sizes,
                                           const std::vector<Water>& cells) {
  const std::vector<std::vector<float>> fields = split_cells<Water>(std::span<const Water>(cells));
  std::vector<std::vector<float>> out(3);
  ctx.compile(program, sizes).run({fields[0], fields[1], fields[2]}, {out[0], out[1], out[2]});
  return out;
}

/// The largest difference between `cells` and the reference grids.
double worst_difference(const std::vector<Water>& cells,
                        const std::vector<std::vector<float>>& reference) {
  const std::vector<std::vector<float>> got = split_cells<Water>(std::span<const Water>(cells));
  double worst = 0;
  for (size_t k = 0; k < 3; ++k)
    worst = std::max(worst, max_difference(got[k], reference[k]));
  return worst;
}

} // namespace

TEST_CASE("cells: a Hana struct's members split into grids and merge back") {
  CHECK(cell_fields<Water>() == std::vector<std::string>{"h", "hu", "hv"});
  std::vector<Water> cells{{1, 2, 3}, {4, 5, 6}};
  std::vector<std::vector<float>> fields = split_cells<Water>(std::span<const Water>(cells));
  CHECK(fields == std::vector<std::vector<float>>{{1, 4}, {2, 5}, {3, 6}});
  fields[1] = {7, 8};
  merge_cells<Water>(fields, std::span<Water>(cells));
  CHECK(cells[0].hu == 7);
  CHECK(cells[1].hu == 8);
  CHECK(cells[1].hv == 6);
  CHECK(contains(message_of<UserError>([&] {
                   merge_cells<Water>({{1}, {2}}, std::span<Water>(cells));
                 }),
                 "2 arrays for a cell of 3 members"));
}

TEST_CASE("cells: one shallow-water step on a grid of cells, in every layout") {
  Context ctx("cpu");
  const std::string source = [] {
    std::ifstream in(LIFTX_SOURCE_DIR "/stencils/shallow_water.lift");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  const Sizes sizes{{"M", 10}, {"N", 36}};
  const std::vector<Water> now = lake(10 * 36, 41);
  const std::vector<std::vector<float>> reference =
      step_apart(ctx, parse_program(source), sizes, now);
  const std::string header = "def shallow_water(h: [[float]N]M, hu: [[float]N]M, hv: [[float]N]M)";
  for (const std::string layout : {"", " layout aos(h, hu, hv)", " layout aosoa(8, h, hu, hv)"}) {
    CAPTURE(layout);
    std::string stored = source;
    stored.replace(stored.find(header), header.size(), header + layout);
    Kernel k = ctx.compile(parse_program(stored), sizes);
    std::vector<Water> next(now.size());
    run_cells<Water>(k, now, next);
    CHECK(worst_difference(next, reference) < 1e-5);
  }
  // A kernel of another shape is refused before anything runs.
  Kernel jacobi = ctx.compile(load_program(LIFTX_SOURCE_DIR "/stencils/jacobi2d5pt.lift"), sizes);
  std::vector<Water> next(now.size());
  CHECK(contains(message_of<UserError>([&] { run_cells<Water>(jacobi, now, next); }),
                 "takes 1 grids and writes 1, the cell has 3 members"));
}

TEST_CASE("cells: tune() with layouts ranks stored and separate grids, and the winner "
          "steps the cells") {
  TempDir dir("tune-cells");
  ContextOptions options;
  options.tuning_db = (dir.path / "tuning.db").string();
  Context ctx("cpu", options);
  const Program p = load_program(LIFTX_SOURCE_DIR "/stencils/shallow_water.lift");
  const Sizes sizes{{"M", 8}, {"N", 32}};
  const std::vector<Water> now = lake(8 * 32, 43);
  const std::vector<std::vector<float>> fields = split_cells<Water>(std::span<const Water>(now));
  const std::vector<std::vector<float>> reference = step_apart(ctx, p, sizes, now);

  TuneOptions o;
  o.budget = 3;
  o.max_variants = 0; // the whole space: the stored grids' variants with the separate ones
  o.repeat = 2;
  o.layouts = true;
  const TuneResult tuned = tune(ctx, p, sizes, o, {fields[0], fields[1], fields[2]});
  // The grids stored together (AoS, AoSoA(32)) are ranked beside the separate grids: the same
  // program without layouts ranks fewer variants. Which of them the model runs first is the
  // model's business (the shipped CPU model prefers register windows of separate grids here).
  ContextOptions separate_options;
  separate_options.tuning_db = (dir.path / "separate.db").string();
  Context separate_ctx("cpu", separate_options);
  TuneOptions separate = o;
  separate.layouts = false;
  separate.budget = 1;
  const TuneResult apart =
      tune(separate_ctx, p, sizes, separate, {fields[0], fields[1], fields[2]});
  CHECK(apart.ranked > 0);
  CHECK(tuned.ranked > apart.ranked);
  std::vector<Water> next(now.size());
  run_cells<Water>(tuned.kernel, now, next);
  CHECK(worst_difference(next, reference) < 1e-5);
}
