// Bank-conflict padding over the variant space (issue 28, seed 004's Algorithm 2): for each
// program, the variants whose kernels keep a local array of two or more dimensions (the first
// LIMIT of the stream, or every STRIDE-th), how many of them have a bank conflict on the profile's
// representative warp and what space::choose_bank_padding makes of them.
//
//   bank_padding_bench [--size M=4096,N=4096] [--profile nvidia] [--limit 200] [--stride 1]
//                      FILE...
// Prints one table row per program. Static only: nothing runs on a device.
#include "ir/parse/parser.hpp"
#include "runtime/device.hpp"
#include "space/bank_padding.hpp"
#include "space/space.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

using namespace liftx;

namespace {

Sizes parse_sizes(const std::string& text, const ir::Program& program) {
  Sizes sizes;
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const size_t eq = item.find('=');
    if (eq == std::string::npos) // one value for every size variable
      for (const arith::Expr& v : program.size_vars())
        sizes[v.node().name] = std::stoll(item);
    else
      sizes[item.substr(0, eq)] = std::stoll(item.substr(eq + 1));
    start = comma + 1;
  }
  return sizes;
}

} // namespace

int main(int argc, char** argv) try {
  std::string sizes_text = "4096";
  std::string profile_name = "nvidia";
  int64_t limit = 200, stride = 1;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (!std::strcmp(argv[i], "--size"))
      sizes_text = value();
    else if (!std::strcmp(argv[i], "--profile"))
      profile_name = value();
    else if (!std::strcmp(argv[i], "--limit"))
      limit = std::stoll(value());
    else if (!std::strcmp(argv[i], "--stride"))
      stride = std::max<int64_t>(1, std::stoll(value()));
    else
      files.emplace_back(argv[i]);
  }
  const target::DeviceProfile profile = runtime::named_profile(profile_name);
  fmt::print("| program | variants streamed | with a 2D+ local array | checked | with a conflict | "
             "padded | mean worst degree before -> after | seconds |\n|---|---|---|---|---|---|---|"
             "---|\n");
  for (const std::string& file : files) {
    const auto t0 = std::chrono::steady_clock::now();
    const ir::Module module = parse::parse_file(file);
    space::SpaceOptions options;
    options.sizes = parse_sizes(sizes_text, module.main());
    options.device = profile.limits();
    space::VariantStream stream(module.main(), options);
    space::Variant v;
    int64_t local = 0, checked = 0, conflicts = 0, padded = 0;
    double before = 0, after = 0;
    while (checked < limit && stream.next(v)) {
      if (ir::print(v.program).find("toLocal(") == std::string::npos)
        continue;
      if (local++ % stride != 0)
        continue;
      const codegen::LaunchRequest request = codegen::request_for(v.launch);
      const space::BankPadding padding =
          space::choose_bank_padding(v.program, options.sizes, request, profile);
      if (padding.arrays.empty())
        continue;
      ++checked;
      // Degrees are the kernel's worst over all its local references: before any padding, and
      // once the last array is padded.
      const double worst_before = padding.arrays.front().degree_unpadded;
      const double worst_after = padding.arrays.back().degree_padded;
      conflicts += worst_before > 1 ? 1 : 0;
      padded += padding.changed() ? 1 : 0;
      before += worst_before;
      after += worst_after;
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("| {} | {} | {} | {} | {} | {} | {:.2f} -> {:.2f} | {:.1f} |\n", module.main().name,
               stream.counts().variants, local, checked, conflicts, padded,
               checked ? before / double(checked) : 0.0, checked ? after / double(checked) : 0.0,
               seconds);
  }
  return 0;
} catch (const UserError& e) {
  fmt::print(stderr, "error: {}\n", e.what());
  return 2;
}
