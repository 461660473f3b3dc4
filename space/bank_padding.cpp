#include "space/bank_padding.hpp"

#include "codegen/kernel.hpp"
#include "features/features.hpp"
#include "rewrite/rules.hpp"

#include <algorithm>

namespace liftx::space {
namespace {

struct LocalCost {
  double total = 0;  ///< sum over the local references of C(degree)
  double worst = 1;  ///< the largest degree of one reference
  bool fits = false; ///< the work-group's local memory fits the device
};

/// The cost of the kernel's local references, each at its degree over the representative warp;
/// references no lane of that warp executes do not count.
LocalCost local_cost(const ir::Program& program, const Sizes& sizes,
                     const codegen::LaunchRequest& request, const target::DeviceProfile& device,
                     const BankCost& cost) {
  codegen::PreparedLaunch prepared =
      codegen::prepare_launch(program, sizes, request, device.limits());
  const std::vector<codegen::MemoryAccess> accesses = prepared.kernel.accesses;
  const features::Analysis analysis =
      features::KernelModel(std::move(prepared.kernel)).analyze(prepared.launch, sizes, device);
  LocalCost c;
  c.fits = device.local_mem_bytes == 0 ||
           analysis.features.local_memory_bytes <= static_cast<double>(device.local_mem_bytes);
  for (size_t k = 0; k < accesses.size(); ++k) {
    const std::optional<double>& degree = analysis.accesses.at(k).value;
    if (accesses[k].space != codegen::AddressSpace::Local || !degree)
      continue;
    c.total += cost(*degree);
    c.worst = std::max(c.worst, *degree);
  }
  return c;
}

/// The sites of `program` where pad-local-rows applies (toLocal of 2+ dimensions of scalars).
std::vector<rewrite::Path> padding_sites(const ir::Program& program) {
  const rewrite::Rule probe = rewrite::pad_local_rows(1);
  std::vector<rewrite::Path> paths;
  for (const rewrite::Site& s : rewrite::sites(program))
    if (!s.is_function && rewrite::applied(probe.apply(s.expr, s.context)))
      paths.push_back(s.path);
  return paths;
}

const rewrite::Site& site_at(const std::vector<rewrite::Site>& sites, const rewrite::Path& path) {
  auto it = std::find_if(sites.begin(), sites.end(),
                         [&](const rewrite::Site& s) { return s.path == path; });
  LIFTX_INTERNAL_CHECK(it != sites.end(), "no site left at a toLocal's path");
  return *it;
}

} // namespace

bool BankPadding::changed() const {
  return std::any_of(arrays.begin(), arrays.end(),
                     [](const LocalArrayPadding& a) { return a.padding > 0; });
}

BankPadding choose_bank_padding(const ir::Program& program, const Sizes& sizes,
                                const codegen::LaunchRequest& request,
                                const target::DeviceProfile& device, BankCost cost) {
  BankPadding out{program, {}, std::max<int64_t>(1, device.local_mem_banks)};
  // A CPU's local memory is ordinary cached memory: no banks, nothing to pad.
  if (device.type == target::DeviceType::cpu)
    return out;
  for (const rewrite::Path& path : padding_sites(program)) {
    const LocalCost unpadded = local_cost(out.program, sizes, request, device, cost);
    LocalArrayPadding choice{path,          0, unpadded.total, unpadded.total, unpadded.worst,
                             unpadded.worst};
    out.arrays.push_back(choice);
    // Every reference at degree 1 costs the least it can: no padding does better.
    if (unpadded.worst <= 1)
      continue;
    ir::Program best = out.program;
    const std::vector<rewrite::Site> sites = rewrite::sites(out.program);
    const rewrite::Site& site = site_at(sites, path);
    for (int64_t p = 1; p < out.banks; ++p) {
      auto padded = rewrite::apply_at(out.program, rewrite::pad_local_rows(p), site);
      const auto* candidate = std::get_if<ir::Program>(&padded);
      LIFTX_INTERNAL_CHECK(candidate != nullptr, "pad-local-rows({}) refused a site it accepted",
                           p);
      const LocalCost c = local_cost(*candidate, sizes, request, device, cost);
      if (c.fits && c.total < choice.cost_padded) {
        choice.padding = p;
        choice.cost_padded = c.total;
        choice.degree_padded = c.worst;
        best = *candidate;
      }
    }
    out.program = best;
    out.arrays.back() = choice;
  }
  return out;
}

} // namespace liftx::space
