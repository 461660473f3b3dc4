// liftx::tune() on the eight benchmark stencils, as an application calls it: does the model's
// pick beat the default lowering (what Context::compile gives)? For each stencil, tune() with a
// fresh tuning database, default options (the default lowering as trial 0, then the budget's
// best-ranked variants of the first max_variants of the space), each variant verified against the
// interpreter and timed on random inputs (median of 10 after 3 warm-up runs). Prints one row per
// stencil: the default's time, the best pick's time and rank, and the speed-up.
//   build/tune_bench [device] [size] [budget] [max_variants]
// Defaults: cpu (PoCL), every size 512, budget 5, max_variants as TuneOptions (20000; 0 = all).
#include <liftx/liftx.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const std::string device = argc > 1 ? argv[1] : "cpu";
  const int64_t size = argc > 2 ? std::atoll(argv[2]) : 512;
  liftx::TuneOptions options;
  if (argc > 3)
    options.budget = std::atoi(argv[3]);
  if (argc > 4)
    options.max_variants = std::atoll(argv[4]);
  options.retune = true;
  const fs::path source(LIFTX_BENCH_SOURCE_DIR);
  const fs::path scratch =
      fs::temp_directory_path() / fmt::format("liftx-tune-bench-{}", ::getpid());
  fs::create_directories(scratch);
  liftx::ContextOptions context_options;
  context_options.tuning_db = (scratch / "tuning.db").string();
  liftx::Context ctx(device, context_options);

  const std::vector<std::string> stencils = {"gaussian",    "gradient", "hotspot2d", "jacobi2d5pt",
                                             "jacobi2d9pt", "srad1",    "srad2",     "stencil2d"};
  fmt::print("tune() on {}, sizes {}, budget {}, max_variants {}; times: median of {} runs\n\n",
             ctx.device().name, size, options.budget, options.max_variants, options.repeat);
  fmt::print("{:<12} {:>10} {:>10} {:>6} {:>8}  {}\n", "stencil", "default ms", "pick ms", "rank",
             "speed-up", "best pick");
  int beaten = 0, compared = 0;
  for (const std::string& name : stencils) {
    const liftx::Program program =
        liftx::load_program((source / "stencils" / (name + ".lift")).string());
    const liftx::Sizes sizes = {{"M", size}, {"N", size}}; // the eight are M x N grids
    const liftx::TuneResult result = liftx::tune(ctx, program, sizes, options);
    std::optional<double> default_ms;
    const liftx::Trial* pick = nullptr;
    for (const liftx::Trial& t : result.trials) {
      if (t.rank == 0)
        default_ms = t.median_ms;
      else if (t.median_ms && (!pick || *t.median_ms < *pick->median_ms))
        pick = &t;
    }
    if (!default_ms || !pick) {
      fmt::print("{:<12} {:>10} {:>10}   (no comparison: {} trials)\n", name,
                 default_ms ? fmt::format("{:.4f}", *default_ms) : "-",
                 pick ? fmt::format("{:.4f}", *pick->median_ms) : "-", result.trials.size());
      continue;
    }
    ++compared;
    beaten += *pick->median_ms < *default_ms;
    fmt::print("{:<12} {:>10.4f} {:>10.4f} {:>6} {:>7.2f}x  {}\n", name, *default_ms,
               *pick->median_ms, pick->rank, *default_ms / *pick->median_ms, pick->variant);
  }
  fmt::print("\nthe best pick beats the default lowering on {} of {} stencils\n", beaten, compared);
  fs::remove_all(scratch);
  return 0;
}
