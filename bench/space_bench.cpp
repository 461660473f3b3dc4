// Variant-space benchmark: enumerate variants of a stencil (default Jacobi2D 5-point at 4096x4096,
// nvidia profile) and generate their OpenCL; prints variants, distinct kernel sources, seconds and
// variants per second. The kernel source is generated once per lowered program (tied and free
// kernels separately) by the stream, and reused across its launch configurations.
//   space_bench [FILE] [--size M=4096,N=4096] [--variants 10000] [--profile nvidia]
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"
#include "space/space.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <string>

using namespace liftx;

int main(int argc, char** argv) {
  std::string file = "stencils/jacobi2d5pt.lift";
  std::string sizes_text = "M=4096,N=4096";
  std::string profile = "nvidia";
  int64_t limit = 10000;
  for (int i = 1; i < argc; ++i) {
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (!std::strcmp(argv[i], "--size"))
      sizes_text = value();
    else if (!std::strcmp(argv[i], "--variants"))
      limit = std::stoll(value());
    else if (!std::strcmp(argv[i], "--profile"))
      profile = value();
    else
      file = argv[i];
  }
  try {
    space::SpaceOptions options;
    size_t start = 0;
    while (start < sizes_text.size()) {
      size_t comma = sizes_text.find(',', start);
      std::string item = sizes_text.substr(start, comma - start);
      size_t eq = item.find('=');
      options.sizes[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
      if (comma == std::string::npos)
        break;
      start = comma + 1;
    }
    options.device = runtime::named_profile(profile).limits();
    auto t0 = std::chrono::steady_clock::now();
    ir::Module module = parse::parse_file(file);
    space::VariantStream stream(module.main(), options);
    space::Variant v;
    size_t source_bytes = 0;
    while ((limit <= 0 || stream.counts().variants < limit) && stream.next(v))
      source_bytes += v.kernel_source().size();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const space::SpaceCounts& c = stream.counts();
    fmt::print("{:<28} {:>9} {:>9} {:>9} {:>9} {:>12}\n", "stencil (size, profile)", "variants",
               "sources", "lowered", "seconds", "variants/s");
    fmt::print("{:<28} {:>9} {:>9} {:>9} {:>9.2f} {:>12.0f}\n",
               fmt::format("{} ({}, {})", module.main().name, sizes_text, profile), c.variants,
               c.distinct_sources, c.lowered_programs, seconds, c.variants / seconds);
    fmt::print("\nper strategy:\n");
    for (const auto& [k, n] : c.per_strategy)
      fmt::print("  {:<24} {}\n", k, n);
    fmt::print("rejections:\n");
    for (const auto& [k, n] : c.rejections)
      fmt::print("  {:<48} {}\n", k, n);
    fmt::print("(generated source bytes: {})\n", source_bytes);
  } catch (const std::exception& e) {
    fmt::print(stderr, "space_bench: {}\n", e.what());
    return 2;
  }
  return 0;
}
