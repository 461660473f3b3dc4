// Kernel assembly, once the body is generated: the instrumentation buffers, the kernel's name and
// signature, the user functions it calls, the scalarised body, and what the kernel records for
// its launches.
#include "codegen/generator.hpp"
#include "codegen/scalarise.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace liftx::codegen {

namespace {

std::string parameter_declaration(const KernelArg& a) {
  switch (a.role) {
  case KernelArg::Role::Input:
    return fmt::format("const global {}* restrict {}", ir::scalar_name(a.kind), a.name);
  case KernelArg::Role::Output:
  case KernelArg::Role::Temporary:
    return fmt::format("global {}* {}", ir::scalar_name(a.kind), a.name);
  case KernelArg::Role::Local:
    return fmt::format("local {}* {}", ir::scalar_name(a.kind), a.name);
  case KernelArg::Role::Size:
    return fmt::format("int {}", a.name);
  case KernelArg::Role::Counters:
  case KernelArg::Role::FirstIndex:
    return fmt::format("global int* {}", a.name);
  }
  return "";
}

} // namespace

void Generator::declare_aligned_local_arrays() {
  // The widest aligned vector read of each constant-size local buffer (vector_of reads it
  // through a cast exactly when the index is provably aligned).
  std::map<std::string, int64_t, std::less<>> alignment;
  for (const MemoryAccess& a : kernel_.accesses)
    if (a.space == AddressSpace::Local && !a.is_store && a.width > 1 &&
        constant_local_buffers_.count(a.buffer) && provably_aligned(a.index, a.width, divisors_)) {
      const int64_t bytes = a.width * static_cast<int64_t>(scalar_bytes(a.kind));
      alignment[a.buffer] = std::max(alignment[a.buffer], bytes);
    }
  std::vector<KernelArg> args;
  for (KernelArg& a : kernel_.args) {
    auto it = alignment.find(a.name);
    if (a.role == KernelArg::Role::Local && it != alignment.end())
      kernel_.local_arrays.push_back({std::move(a), it->second});
    else
      args.push_back(std::move(a));
  }
  kernel_.args = std::move(args);
}

void Generator::assemble() {
  declare_aligned_local_arrays();
  if (options_.instrument) {
    Instrumentation inst{static_cast<int>(kernel_.accesses.size()),
                         static_cast<int>(kernel_.barriers.size()),
                         static_cast<int>(kernel_.loops.size())};
    kernel_.instrumentation = inst;
    kernel_.args.push_back({KernelArg::Role::Counters,
                            "liftx_counts",
                            ir::ScalarKind::Int,
                            arith::Expr(inst.slots()),
                            -1,
                            {}});
    kernel_.args.push_back({KernelArg::Role::FirstIndex,
                            "liftx_first_index",
                            ir::ScalarKind::Int,
                            arith::Expr(inst.access_slots),
                            -1,
                            {}});
  }
  // The kernel is named after the program, unless that name is taken by one of its user
  // functions or by OpenCL C itself. A suffix cannot free a name reserved by its prefix
  // (`liftx_x`, `native_sqrt`, `__x`), so such a name is prefixed instead.
  const auto taken = [&](const std::string& name) {
    return used_userfuns_.count(name) || ir::is_reserved_in_opencl(name);
  };
  if (taken(kernel_.name)) {
    const std::string wanted = kernel_.name;
    std::string name = wanted + "_kernel";
    for (int i = 1; taken(name); ++i)
      name = fmt::format("k{}_{}", i, wanted);
    kernel_.name = std::move(name);
  }
  // Sizes are kernel arguments, after the buffers, sorted by name.
  for (const arith::Expr& v : program_.size_vars())
    kernel_.args.push_back(
        {KernelArg::Role::Size, v.node().name, ir::ScalarKind::Int, arith::Expr(1), -1, {}});
  for (const auto& [name, divisor] : divisors_)
    kernel_.size_divisors.emplace_back(name, divisor);
  // Scalarising private arrays rewrites text only: the census is the same either way.
  kernel_.census = cl::census(body_);
  if (!options_.source)
    return;
  std::string source;
  if (std::any_of(used_userfuns_.begin(), used_userfuns_.end(),
                  [](const auto& used) { return used.second->uses_opencl_int_helpers(); }))
    source += ir::UserFunDef::opencl_int_helpers() + "\n";
  std::set<std::string> tuple_types;
  for (const auto& [name, def] : used_userfuns_)
    if (def->returns_tuple() && tuple_types.insert(def->tuple_type_name()).second)
      source += def->tuple_type_definition() + "\n";
  if (!tuple_types.empty())
    source += "\n";
  for (const auto& [name, def] : used_userfuns_)
    source += def->to_opencl() + "\n\n";
  source += lane_exchange_helpers();
  source += edge_tiles_first_helpers();
  std::string params;
  for (const KernelArg& a : kernel_.args)
    params += fmt::format("{}\n    {}", params.empty() ? "" : ",", parameter_declaration(a));
  std::string preamble;
  // OpenCL declares local memory at the kernel's outermost scope.
  for (const Kernel::LocalArray& a : kernel_.local_arrays) {
    std::optional<int64_t> elements = a.buffer.elements.as_constant();
    LIFTX_INTERNAL_CHECK(elements, "local array {} of a size that is not a constant",
                         a.buffer.name);
    preamble += fmt::format("  local {} {}[{}] __attribute__((aligned({})));\n",
                            ir::scalar_name(a.buffer.kind), a.buffer.name, *elements, a.alignment);
  }
  if (const auto& inst = kernel_.instrumentation) {
    source += fmt::format("#define LIFTX_ACCESSES {}\n#define LIFTX_SLOTS {}\n"
                          "#define LIFTX_BARRIER_SLOT(k) ({} + (k))\n"
                          "#define LIFTX_LOOP_SLOT(k) ({} + (k))\n\n",
                          inst->access_slots, inst->slots(), inst->access_slots,
                          inst->access_slots + inst->barrier_slots);
    preamble = "  const int liftx_wi = get_global_id(0) + get_global_size(0) * (get_global_id(1) + "
               "get_global_size(1) * get_global_id(2));\n";
  }
  cl::scalarise_private_arrays(body_);
  const std::string body = cl::print(body_, 1);
  // An aligned read's cast is sound only on the arrays declared above.
  for (const KernelArg& a : kernel_.args)
    if (a.role == KernelArg::Role::Local)
      for (int width : {2, 4, 8, 16})
        LIFTX_INTERNAL_CHECK(body.find(fmt::format("(const local {}{}*)({} + ",
                                                   ir::scalar_name(a.kind), width, a.name)) ==
                                 std::string::npos,
                             "an aligned vector read of local argument {}", a.name);
  source += fmt::format("kernel void {}({}) {{\n{}{}}}\n", kernel_.name, params, preamble, body);
  kernel_.source = std::move(source);
}

} // namespace liftx::codegen
