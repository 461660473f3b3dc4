#include "codegen/launch.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace liftx::codegen {

namespace {

int64_t evaluate_size(const arith::Expr& e, const Sizes& sizes, const char* what) {
  const int64_t value = arith::evaluate(e, sizes);
  LIFTX_USER_CHECK(value >= 0, "{} evaluates to {} (negative)", what, value);
  return value;
}

/// " (mapLcl at file:line:col)" for the last located loop of `prefix`, or "".
std::string located_loop(const Kernel& kernel, std::string_view prefix) {
  SourceLoc where;
  for (const LoopRecord& loop : kernel.loops)
    if (loop.primitive.starts_with(prefix) && loop.loc.valid())
      where = loop.loc;
  return where.valid() ? fmt::format(" ({} at {})", prefix, where.to_string()) : std::string();
}

/// " (toLocal at file:line:col)" for the last located local buffer, or "".
std::string located_local_buffer(const Kernel& kernel) {
  SourceLoc where;
  for (const KernelArg& a : kernel.args)
    if (a.role == KernelArg::Role::Local && a.loc.valid())
      where = a.loc;
  for (const Kernel::LocalArray& a : kernel.local_arrays)
    if (a.buffer.loc.valid())
      where = a.buffer.loc;
  return where.valid() ? fmt::format(" (toLocal at {})", where.to_string()) : std::string();
}

} // namespace

bool Launch::local_given() const {
  return std::all_of(local.begin(), local.begin() + dims, [](int64_t l) { return l > 0; });
}

std::string describe(const Launch& launch) {
  std::string g, l;
  for (int d = 0; d < launch.dims; ++d) {
    g += (d ? "x" : "") + std::to_string(launch.global[size_t(d)]);
    l += (d ? "x" : "") + std::to_string(launch.local[size_t(d)]);
  }
  return fmt::format("global {} local {} {}", g, l, launch.tied ? "tied" : "free");
}

int64_t estimated_registers_per_work_item(const Kernel& kernel) {
  const int64_t words = (kernel.private_bytes + 3) / 4 + 16;
  return std::min<int64_t>((words + 7) / 8 * 8, 255);
}

std::optional<LaunchRefusal> launch_refusal(const Kernel& kernel, const Launch& launch,
                                            const Sizes& sizes, const DeviceLimits& limits,
                                            std::optional<int64_t> local_bytes) {
  int64_t group = 1, groups = 1;
  bool groups_known = true;
  for (int d = 0; d < launch.dims; ++d) {
    const auto k = static_cast<size_t>(d);
    const int64_t local = launch.local[k];
    if (local == 0) { // the runtime chooses
      groups_known = false;
      continue;
    }
    if (local < 0 || launch.global[k] % local != 0)
      return LaunchRefusal{
          "local does not divide global",
          fmt::format("local size {} does not divide global size {} in dimension {}", local,
                      launch.global[k], d)};
    if (local > limits.max_work_item_sizes[k])
      return LaunchRefusal{
          "work-item size over the dimension limit",
          fmt::format("local size {} in dimension {} exceeds the device's limit of {}", local, d,
                      limits.max_work_item_sizes[k])};
    group *= local;
    groups *= launch.global[k] / local;
  }
  if (group > limits.max_work_group_size)
    return LaunchRefusal{
        "work-group too large",
        fmt::format("a work-group of {} work-items exceeds the device's limit of {}{}", group,
                    limits.max_work_group_size, located_loop(kernel, "mapLcl"))};
  if (!local_bytes)
    local_bytes = evaluate_size(kernel.local_bytes(), sizes, "local memory");
  if (*local_bytes > limits.local_memory_bytes)
    return LaunchRefusal{"local memory over limit",
                         fmt::format("local memory of {} bytes per work-group exceeds the device's "
                                     "{} bytes{}",
                                     *local_bytes, limits.local_memory_bytes,
                                     located_local_buffer(kernel))};
  if (groups_known && limits.register_words != DeviceLimits::unlimited) {
    const int64_t registers = estimated_registers_per_work_item(kernel);
    if (registers * group > limits.register_words)
      return LaunchRefusal{
          "registers over limit",
          fmt::format("a work-group of {} work-items at about {} registers each ({} bytes of "
                      "private memory) needs more than the device's {} registers",
                      group, registers, kernel.private_bytes, limits.register_words)};
  }
  if (groups_known && groups < limits.min_work_groups)
    return LaunchRefusal{"too few work-groups",
                         fmt::format("{} work-groups leave the device's compute units idle (at "
                                     "least {} wanted)",
                                     groups, limits.min_work_groups)};
  if (std::optional<std::string> why = divergent_barrier(kernel, launch.local, sizes))
    return LaunchRefusal{"barrier would diverge",
                         fmt::format("cannot launch {}: {}", kernel.name, *why)};
  return std::nullopt;
}

LaunchRequest request_for(const Launch& launch) {
  const auto dims = static_cast<size_t>(launch.dims);
  LaunchRequest request;
  // A local size of 0 leaves the work-group to the runtime, which a request says by asking none.
  if (std::all_of(launch.local.begin(), launch.local.begin() + dims,
                  [](int64_t l) { return l > 0; }))
    request.local.assign(launch.local.begin(), launch.local.begin() + dims);
  if (!launch.tied)
    request.global.assign(launch.global.begin(), launch.global.begin() + dims);
  return request;
}

Launch tail_launch(const Kernel& tail, const Launch& head, const Sizes& sizes) {
  if (!head.tied)
    return head;
  Launch launch;
  launch.dims = tail.launch.dims;
  launch.tied = true;
  for (int d = 0; d < launch.dims; ++d) {
    const auto k = static_cast<size_t>(d);
    if (tail.launch.global[d])
      launch.global[k] = evaluate_size(*tail.launch.global[d], sizes, "global size");
    if (tail.launch.local[d])
      launch.local[k] = evaluate_size(*tail.launch.local[d], sizes, "local size");
    else
      launch.local[k] = d < head.dims && head.local[k] > 0
                            ? std::gcd(head.local[k], launch.global[k])
                            : 0; // the runtime chooses
  }
  return launch;
}

SubgroupRows subgroup_rows_for(const DeviceLimits& limits) {
  return limits.subgroup_shuffle ? SubgroupRows::nvidia_shuffle : SubgroupRows::local_memory;
}

PreparedLaunch prepare_launch(const ir::Program& program, const Sizes& sizes,
                              const LaunchRequest& request, const DeviceLimits& limits) {
  PreparedLaunch prepared;
  Options options{true, false};
  options.subgroup_rows = request.subgroup_rows.value_or(subgroup_rows_for(limits));
  options.interior_tiles = request.interior_tiles;
  prepared.kernel = generate(program, options);
  const LaunchRule& rule = prepared.kernel.launch;
  Launch& launch = prepared.launch;
  launch.dims = rule.dims;
  auto check_count = [&](const std::vector<int64_t>& values, const char* what) {
    LIFTX_USER_CHECK(!(!values.empty() && static_cast<int>(values.size()) != launch.dims),
                     "--{} has {} value(s), but the kernel of {} uses {} dimension(s)", what,
                     values.size(), program.name, launch.dims);
    for (int64_t v : values)
      LIFTX_USER_CHECK(v >= 1, "--{} values must be positive, got {}", what, v);
  };
  check_count(request.global, "global");
  check_count(request.local, "local");
  // Aligned vector accesses were generated for sizes that are multiples of these.
  std::vector<std::pair<std::string, int64_t>> divisors = prepared.kernel.size_divisors;
  if (prepared.kernel.tail)
    divisors.insert(divisors.end(), prepared.kernel.tail->size_divisors.begin(),
                    prepared.kernel.tail->size_divisors.end());
  for (const auto& [name, divisor] : divisors) {
    auto it = sizes.find(name);
    LIFTX_USER_CHECK(!(it != sizes.end() && it->second % divisor != 0),
                     "{} = {}: the kernel of {} needs {} to be a multiple of {}", name, it->second,
                     program.name, name, divisor);
  }
  for (const Kernel* k = &prepared.kernel; k; k = k->tail.get())
    for (const Kernel::SizeCondition& condition : k->size_conditions) {
      const int64_t slack = arith::evaluate(condition.at_least_zero, sizes);
      LIFTX_USER_CHECK(slack >= 0, "the kernel of {} does not run at these sizes: {}, short by {}",
                       program.name, condition.what, -slack);
    }

  std::array<int64_t, 3> tied_global{1, 1, 1};
  std::array<int64_t, 3> tied_local{0, 0, 0};
  for (int d = 0; d < launch.dims; ++d) {
    if (rule.global[d])
      tied_global[d] = evaluate_size(*rule.global[d], sizes, "global size");
    if (rule.local[d])
      tied_local[d] = evaluate_size(*rule.local[d], sizes, "local size");
  }
  // The tied kernel serves the launch if the requested sizes agree with its rule. A local size
  // alone keeps the rule's global size, rounded up to a multiple: the work-items past the mapped
  // length would index past the arrays of the tied kernel (it has no bounds checks), so a
  // rounded launch takes the free-thread kernel, whose maps loop over their ranges.
  bool tied = true;
  for (int d = 0; d < launch.dims; ++d) {
    if (!request.global.empty() && request.global[d] != tied_global[d])
      tied = false;
    if (!request.local.empty() && rule.local[d] && request.local[d] != tied_local[d])
      tied = false;
    if (request.global.empty() && !request.local.empty() && tied_global[d] % request.local[d] != 0)
      tied = false;
  }
  launch.tied = tied;
  for (int d = 0; d < launch.dims; ++d) {
    launch.local[d] = !request.local.empty() ? request.local[d] : tied ? tied_local[d] : 0;
    int64_t global = !request.global.empty() ? request.global[d] : tied_global[d];
    if (request.global.empty() && launch.local[d] > 0)
      global = (global + launch.local[d] - 1) / launch.local[d] * launch.local[d];
    launch.global[d] = std::max<int64_t>(global, 1);
  }
  if (!tied || request.instrument)
    prepared.kernel = generate(program, Options{tied, request.instrument});

  DeviceLimits device = limits;
  device.min_work_groups = 1; // a pruning policy of the space, not what the device enforces
  device.register_words = DeviceLimits::unlimited; // an estimate: the device judges
  if (std::optional<LaunchRefusal> refusal = launch_refusal(prepared.kernel, launch, sizes, device))
    throw UserError(refusal->message);
  if (std::optional<std::string> why = index_overflow(prepared.kernel, sizes))
    throw UserError(fmt::format("cannot launch {} at these sizes: {}", program.name, *why));
  if (std::optional<std::string> why = launch_index_overflow(prepared.kernel, launch, sizes))
    throw UserError(fmt::format("cannot launch {} so: {}", program.name, *why));
  if (const std::shared_ptr<const Kernel>& tail = prepared.kernel.tail) {
    prepared.tail = tail_launch(*tail, launch, sizes);
    if (std::optional<LaunchRefusal> refusal = launch_refusal(*tail, *prepared.tail, sizes, device))
      throw UserError(
          fmt::format("the remainder launches of {}: {}", program.name, refusal->message));
    if (std::optional<std::string> why = index_overflow(*tail, sizes))
      throw UserError(
          fmt::format("cannot launch the remainder of {} at these sizes: {}", program.name, *why));
    if (std::optional<std::string> why = launch_index_overflow(*tail, *prepared.tail, sizes))
      throw UserError(fmt::format("cannot launch the remainder of {} so: {}", program.name, *why));
  }
  prepared.local_bytes = evaluate_size(prepared.kernel.local_bytes(), sizes, "local memory");
  return prepared;
}

} // namespace liftx::codegen
