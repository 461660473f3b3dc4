// Static features of 10,000 Jacobi 2D variants: the lowered programs of
// stencils/variants/jacobi2d5pt × launch configurations (powers of two global and local sizes) ×
// the nvidia and amd profiles, at 4096 x 4096. Code generation runs once per program and launch
// style (tied, free); each variant is then one KernelModel::analyze.
//   build/features_bench [count]
#include "codegen/kernel.hpp"
#include "features/features.hpp"
#include "ir/parse/parser.hpp"
#include "target/profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

using namespace liftx;
namespace fs = std::filesystem;

namespace {

struct Variant {
  std::string name;
  const features::KernelModel* model;
  features::Launch launch;
  const target::DeviceProfile* profile;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char** argv) {
  const size_t wanted = argc > 1 ? static_cast<size_t>(std::atol(argv[1])) : 10000;
  const fs::path dir = fs::path(LIFTX_BENCH_SOURCE_DIR) / "stencils" / "variants" / "jacobi2d5pt";
  const Sizes sizes{{"M", 4096}, {"N", 4096}};
  const std::vector<target::DeviceProfile> profiles = {*target::model_profile("nvidia"),
                                                       *target::model_profile("amd")};
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".lift")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());

  // Code generation: once per program and launch style.
  auto start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<features::KernelModel>> models;
  std::vector<std::string> names;
  for (const fs::path& file : files) {
    ir::Module module = parse::parse_file(file.string());
    for (bool tied : {true, false}) {
      models.push_back(std::make_unique<features::KernelModel>(
          codegen::generate(module.main(), codegen::Options{tied})));
      names.push_back(file.stem().string() + (tied ? "/tied" : "/free"));
    }
  }
  const double codegen_s = seconds_since(start);

  // Launches: the tied kernel at its own launch rule; the free kernel at every power-of-two
  // global size from 64 to 4096 per dimension and every power-of-two local size dividing it
  // with at most 256 work-items per group (valid on both profiles).
  std::vector<std::vector<features::Launch>> launches(models.size());
  for (size_t m = 0; m < models.size(); ++m) {
    const codegen::LaunchRule& rule = models[m]->kernel().launch;
    const int dims = rule.dims;
    if (m % 2 == 0) {
      features::Launch l{dims, {1, 1, 1}, {0, 0, 0}};
      for (int d = 0; d < dims; ++d) {
        l.global[size_t(d)] = arith::evaluate(*rule.global[size_t(d)], sizes);
        if (rule.local[size_t(d)])
          l.local[size_t(d)] = arith::evaluate(*rule.local[size_t(d)], sizes);
      }
      launches[m].push_back(l);
      continue;
    }
    for (int64_t g0 = 64; g0 <= 4096; g0 *= 2)
      for (int64_t g1 = dims == 2 ? 64 : 1; g1 <= (dims == 2 ? 4096 : 1); g1 *= 2)
        for (int64_t l0 = 1; l0 <= std::min<int64_t>(g0, 256); l0 *= 2)
          for (int64_t l1 = 1; l1 <= (dims == 2 ? std::min<int64_t>(g1, 256 / l0) : 1); l1 *= 2)
            launches[m].push_back({dims, {g0, g1, 1}, {l0, l1, 1}});
  }
  // Round robin over kernels, launches and profiles until `wanted` variants.
  std::vector<Variant> variants;
  for (size_t round = 0; variants.size() < wanted; ++round) {
    bool added = false;
    for (size_t m = 0; m < models.size() && variants.size() < wanted; ++m) {
      size_t per_kernel = launches[m].size() * profiles.size();
      if (round >= per_kernel)
        continue;
      variants.push_back({names[m], models[m].get(), launches[m][round / profiles.size()],
                          &profiles[round % profiles.size()]});
      added = true;
    }
    if (!added)
      break;
  }

  start = std::chrono::steady_clock::now();
  double checksum = 0;
  for (const Variant& v : variants) {
    features::Features f = v.model->compute(v.launch, sizes, *v.profile);
    checksum += f.cache_lines_per_warp_access + f.global_loads_per_thread + f.occupancy;
  }
  const double features_s = seconds_since(start);

  fmt::print("features_bench: jacobi2d5pt ({} programs, {} kernels), M = N = 4096, profiles "
             "nvidia + amd\n",
             files.size(), models.size());
  fmt::print("| step | variants | seconds | variants/s |\n|---|---|---|---|\n");
  fmt::print("| codegen (once per program and launch style) | {} kernels | {:.3f} | - |\n",
             models.size(), codegen_s);
  fmt::print("| features (KernelModel::analyze) | {} | {:.3f} | {:.0f} |\n", variants.size(),
             features_s, static_cast<double>(variants.size()) / features_s);
  fmt::print("| total | {} | {:.3f} | {:.0f} |\n", variants.size(), codegen_s + features_s,
             static_cast<double>(variants.size()) / (codegen_s + features_s));
  fmt::print("checksum {:.6g}\n", checksum);
  return 0;
}
