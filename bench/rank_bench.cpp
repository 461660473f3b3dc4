// Ranking the WHOLE Jacobi 2D variant space with a shipped cost model, without running any: the
// variant stream (rewrite + lowering + code generation of each distinct kernel), static features
// with one KernelModel per kernel and the model's predictions, streamed in chunks over every core,
// keeping the 2,000 best. One ranking per process, so that the peak resident memory is its own.
//   build/rank_bench [model.json] [size] [threads] [top.tsv] [program.lift]
// Defaults: model/data/nvidia-model.json (profile nvidia), M = N = 4096, one thread per core,
// stencils/jacobi2d5pt.lift (another program: every size variable takes `size`, as `--size`).
// top.tsv: every kept variant (rank, index, prediction as an exact hex float, feature row), so
// that two builds' rankings can be compared byte for byte (`cmp`; `-` writes none).
// The CPU comparison: build/rank_bench model/data/cpu-model.json 256
// A space of few launches per kernel (the product: its peak memory is its kernels' models):
//   build/rank_bench model/data/nvidia-model.json 256 2 - stencils/linalg/mm.lift
#include "exec/program_binding.hpp"
#include "explore/rank.hpp"
#include "ir/parse/parser.hpp"
#include "model/model.hpp"

#include <fmt/format.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

using namespace liftx;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The process's peak resident memory (Linux reports ru_maxrss in KiB).
double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_maxrss) / 1024.0;
}

} // namespace

int main(int argc, char** argv) {
  const std::filesystem::path source(LIFTX_BENCH_SOURCE_DIR);
  const std::string model_path =
      argc > 1 ? argv[1] : (source / "model" / "data" / "nvidia-model.json").string();
  const int64_t size = argc > 2 ? std::atol(argv[2]) : 4096;
  const unsigned threads = argc > 3 ? unsigned(std::atoi(argv[3])) : 0;
  const std::filesystem::path program_path =
      argc > 5 ? std::filesystem::path(argv[5])
               : std::filesystem::path("stencils/jacobi2d5pt.lift");
  const model::Model m = model::Model::load(model_path);
  const ir::Module module = parse::parse_file(
      (program_path.is_absolute() ? program_path : source / program_path).string());

  explore::RankOptions options;
  options.sizes = exec::bind_sizes(module.main(), {std::to_string(size)});
  options.threads = threads;
  const auto start = std::chrono::steady_clock::now();
  const explore::RankResult result = explore::rank(module.main(), m, options);
  const double seconds = seconds_since(start);

  fmt::print("rank_bench: {}, every size {}, the whole space, profile {}, model {} ({}, {} "
             "training points), best {} kept\n",
             module.main().name, size, m.profile, model_path, model::to_string(m.kind()),
             m.training_samples(), options.keep);
  fmt::print("| variants ranked | seconds | variants/s | peak RSS (MiB) | threads |\n"
             "|---|---|---|---|---|\n");
  fmt::print("| {} | {:.2f} | {:.0f} | {:.0f} | {} |\n", result.variants, seconds,
             double(result.variants) / seconds, peak_rss_mib(),
             threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency()));
  const explore::RankedVariant& best = result.ranked.front();
  fmt::print("best predicted: index {} {} | {} ({:.3f})\n", best.variant.index,
             explore::describe_parameters(best.variant), codegen::describe(best.variant.launch),
             best.predicted);
  if (argc > 4 && std::string(argv[4]) != "-") {
    // %a prints a double exactly: equal files mean equal rankings, bit for bit.
    std::FILE* out = std::fopen(argv[4], "w");
    if (!out) {
      fmt::print(stderr, "rank_bench: cannot write {}\n", argv[4]);
      return 1;
    }
    for (const explore::RankedVariant& row : result.ranked) {
      std::fprintf(out, "%d\t%lld\t%a", row.rank, static_cast<long long>(row.variant.index),
                   row.predicted);
      for (double c : row.columns)
        std::fprintf(out, "\t%a", c);
      std::fprintf(out, "\n");
    }
    if (std::fclose(out) != 0) {
      fmt::print(stderr, "rank_bench: cannot write {}\n", argv[4]);
      return 1;
    }
  }
  return 0;
}
