// Ranking 10,000 Jacobi 2D variants with the cost model, without running any: the variant stream
// (rewrite + lowering + code generation of each distinct kernel), static features with one
// KernelModel per kernel, and one vectorised model prediction for all of them.
//   build/rank_bench [model.json] [variants] [size]
// Default model: model/data/cpu-model.json; without it, a kNN model on made-up targets over the
// real feature columns (the cost of prediction depends on its training points, not their values).
#include "explore/rank.hpp"
#include "ir/parse/parser.hpp"
#include "model/model.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>

using namespace liftx;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

model::Model synthetic_model() {
  const std::vector<std::string> cols = explore::feature_names();
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  model::Matrix x(2000, static_cast<Eigen::Index>(cols.size()));
  model::Vector y(2000);
  // Features as mixes of 6 latent factors, as correlated hardware counters are.
  const model::Matrix mix = model::Matrix::Random(6, x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    model::Matrix latent(1, 6);
    for (Eigen::Index f = 0; f < 6; ++f)
      latent(0, f) = u(rng);
    x.row(i) = latent * mix;
    y[i] = u(rng);
  }
  model::Model m = model::Model::train(model::Kind::knn, cols, x, y);
  m.profile = "cpu";
  return m;
}

} // namespace

int main(int argc, char** argv) {
  const std::filesystem::path source(LIFTX_BENCH_SOURCE_DIR);
  const std::string model_path =
      argc > 1 ? argv[1] : (source / "model" / "data" / "cpu-model.json").string();
  const int64_t wanted = argc > 2 ? std::atol(argv[2]) : 10000;
  const int64_t size = argc > 3 ? std::atol(argv[3]) : 1024;
  const bool shipped = std::filesystem::exists(model_path);
  model::Model m = shipped ? model::Model::load(model_path) : synthetic_model();
  ir::Module module = parse::parse_file((source / "stencils" / "jacobi2d5pt.lift").string());

  explore::RankOptions options;
  options.sizes = {{"M", size}, {"N", size}};
  options.max_variants = wanted;
  auto start = std::chrono::steady_clock::now();
  std::vector<explore::RankedVariant> ranked = explore::rank(module.main(), m, options);
  const double rank_s = seconds_since(start);

  // The prediction alone, for the same number of rows.
  model::Matrix x = model::Matrix::Random(static_cast<Eigen::Index>(ranked.size()),
                                          static_cast<Eigen::Index>(m.feature_names().size()));
  start = std::chrono::steady_clock::now();
  model::Vector p = m.predict(x);
  const double predict_s = seconds_since(start);

  fmt::print("rank_bench: jacobi2d5pt, M = N = {}, profile {}, model {} ({}, {} training points)\n",
             size, m.profile, shipped ? model_path : "synthetic", model::to_string(m.kind()),
             m.training_samples());
  fmt::print("| step | variants | seconds | variants/s |\n|---|---|---|---|\n");
  fmt::print("| rank (stream + features + prediction + sort) | {} | {:.3f} | {:.0f} |\n",
             ranked.size(), rank_s, double(ranked.size()) / rank_s);
  fmt::print("| of which model prediction (vectorised) | {} | {:.3f} | {:.0f} |\n", p.size(),
             predict_s, double(p.size()) / predict_s);
  fmt::print("best predicted: index {} {} ({:.3f}); target under 0.5 s: {}\n",
             ranked.front().variant.index, explore::describe_parameters(ranked.front().variant),
             ranked.front().predicted, rank_s < 0.5 ? "met" : "NOT met");
  return 0;
}
