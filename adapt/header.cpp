/// `liftx adapt --emit header` (adapt/header.hpp): the generated text mirrors
/// codegen::prepare_launch and AdaptiveArtifact::pick; tests/adapt/test_header.cpp
/// compiles a header and compares its choices with pick() on random shapes.
#include "adapt/header.hpp"

#include "codegen/kernel.hpp"
#include "ir/parse/parser.hpp"
#include "ir/storage.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace liftx::adapt {
namespace {

/// A C++ string literal of `text` (raw literals could meet their delimiter in user code).
std::string cpp_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
    case '\\':
      out += "\\\\";
      break;
    case '"':
      out += "\\\"";
      break;
    case '\n':
      out += "\\n\"\n    \"";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20)
        out += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
      else
        out += c;
    }
  }
  return out + "\"";
}

std::string identifier(const std::string& name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "p_" + out;
  return out;
}

/// An arith expression as C++ over the header's exact evaluator `e` (rationals, as
/// arith::evaluate): `e.ok` turns false on an inexact or undefined step. Variables other than
/// the sizes have no value here: nullopt.
class ExprEmitter {
public:
  explicit ExprEmitter(const std::vector<std::string>& size_names) : names_(size_names) {}

  std::optional<std::string> emit(const arith::Expr& e) const {
    const arith::Node& n = e.node();
    switch (n.kind) {
    case arith::Kind::Cst:
      return fmt::format("e.c({}, {})", n.value.num, n.value.den);
    case arith::Kind::Var: {
      const auto it = std::find(names_.begin(), names_.end(), n.name);
      if (it == names_.end())
        return std::nullopt;
      return fmt::format("e.v({})", it - names_.begin());
    }
    case arith::Kind::Sum:
    case arith::Kind::Prod: {
      std::optional<std::string> acc = emit(n.operands.front());
      for (size_t i = 1; acc && i < n.operands.size(); ++i) {
        const std::optional<std::string> next = emit(n.operands[i]);
        if (!next)
          return std::nullopt;
        acc = fmt::format("e.{}({}, {})", n.kind == arith::Kind::Sum ? "add" : "mul", *acc, *next);
      }
      return acc;
    }
    case arith::Kind::Pow: {
      const std::optional<std::string> base = emit(n.operands[0]);
      if (!base)
        return std::nullopt;
      return fmt::format("e.pow({}, {})", *base, n.exponent);
    }
    case arith::Kind::IntDiv:
    case arith::Kind::Mod:
    case arith::Kind::Min:
    case arith::Kind::Max: {
      const std::optional<std::string> a = emit(n.operands[0]), b = emit(n.operands[1]);
      if (!a || !b)
        return std::nullopt;
      const char* op = n.kind == arith::Kind::IntDiv ? "div"
                       : n.kind == arith::Kind::Mod  ? "mod"
                       : n.kind == arith::Kind::Min  ? "min"
                                                     : "max";
      return fmt::format("e.{}({}, {})", op, *a, *b);
    }
    case arith::Kind::Select: {
      std::vector<std::string> parts;
      for (const arith::Expr& o : n.operands) {
        const std::optional<std::string> part = emit(o);
        if (!part)
          return std::nullopt;
        parts.push_back(*part);
      }
      static constexpr const char* kOps[] = {"<", "<=", ">", ">=", "==", "!="};
      // Only the branch taken is evaluated, as in arith::evaluate.
      return fmt::format("(e.cmp({}, {}) {} 0 ? {} : {})", parts[0], parts[1],
                         kOps[static_cast<int>(n.cmp)], parts[2], parts[3]);
    }
    }
    LIFTX_UNREACHABLE("unknown arith node kind");
  }

  /// emit(), for expressions that depend on the sizes only by construction.
  std::string sizes_only(const arith::Expr& e, const char* what) const {
    std::optional<std::string> text = emit(e);
    LIFTX_INTERNAL_CHECK(text.has_value(), "{} {} depends on more than the sizes", what,
                         e.to_string());
    return *text;
  }

private:
  const std::vector<std::string>& names_;
};

const char* role_name(codegen::KernelArg::Role role) {
  using Role = codegen::KernelArg::Role;
  switch (role) {
  case Role::Input:
    return "Input";
  case Role::Output:
    return "Output";
  case Role::Temporary:
    return "Temporary";
  case Role::Local:
    return "Local";
  case Role::Size:
    return "Size";
  case Role::Counters:
  case Role::FirstIndex:
    break;
  }
  LIFTX_UNREACHABLE("an instrumented kernel in a header");
}

/// `sizes` padded to three dimensions with `fill`.
std::array<int64_t, 3> padded(const std::vector<int64_t>& sizes, int64_t fill = 1) {
  std::array<int64_t, 3> out{fill, fill, fill};
  for (size_t d = 0; d < sizes.size() && d < 3; ++d)
    out[d] = sizes[d];
  return out;
}

/// The launch function of member `m` (see launch_at in the header's comments): launch_<m> (the
/// tied kernel, as codegen::prepare_launch launches it for a requested
/// work-group or the rule's own) or, `rounded`, launch_rounded_<m>: the requested work-group with
/// the rule's global size rounded up to it, which prepare_launch runs as the free-thread kernel
/// (refused here where the tied kernel would serve). A fixed-grid member's launch_<m> is its grid
/// and work-group (the free-thread kernel, or the tied one where they are its launch at these
/// sizes); its launch_rounded_<m> refuses.
std::string launch_function(size_t m, const AdaptiveCandidate& candidate,
                            const codegen::Kernel& kernel, const codegen::Kernel& free_kernel,
                            bool rounded, const ExprEmitter& emitter,
                            const std::vector<std::string>& names) {
  const codegen::LaunchRule& rule = kernel.launch;
  std::string body;
  auto line = [&](const std::string& text) { body += "  " + text + "\n"; };
  if (rule.dims != static_cast<int>(candidate.local.size())) {
    line("(void)s; (void)request_local; (void)limits; (void)out;");
    line("return false; // the kernel's dimensions are not the member's work-group's");
  } else if (candidate.fixed_grid() && rounded) {
    line("(void)s; (void)request_local; (void)limits; (void)out;");
    line("return false; // a fixed grid runs as measured or not at all");
  } else {
    line("Eval e{s};");
    for (const auto& [name, divisor] : kernel.size_divisors) {
      const auto it = std::find(names.begin(), names.end(), name);
      if (it != names.end())
        line(fmt::format("if (s[{}] % {} != 0) return false; // aligned vector accesses",
                         it - names.begin(), divisor));
    }
    for (const codegen::Kernel::SizeCondition& condition : kernel.size_conditions)
      line(fmt::format("if (e.size({}) < 0) return false; // {}",
                       emitter.sizes_only(condition.at_least_zero, "size condition"),
                       condition.what));
    line(fmt::format("const int dims = {};", rule.dims));
    line("std::array<std::int64_t, 3> global{1, 1, 1}, rule_local{0, 0, 0};");
    for (int d = 0; d < rule.dims; ++d) {
      if (rule.global[size_t(d)])
        line(fmt::format("global[{}] = e.size({});", d,
                         emitter.sizes_only(*rule.global[size_t(d)], "global size")));
      if (rule.local[size_t(d)])
        line(fmt::format("rule_local[{}] = e.size({});", d,
                         emitter.sizes_only(*rule.local[size_t(d)], "local size")));
    }
    std::vector<std::string> has_rule_local;
    for (int d = 0; d < 3; ++d)
      has_rule_local.push_back(d < rule.dims && rule.local[size_t(d)] ? "true" : "false");
    line(fmt::format("const bool has_rule_local[3] = {{{}}};", fmt::join(has_rule_local, ", ")));
    line("if (!e.ok) return false;");
    line("std::array<std::int64_t, 3> local{1, 1, 1};");
    if (candidate.fixed_grid()) {
      // The member's own grid and work-group; the tied kernel where they are its launch here.
      line(fmt::format("const std::array<std::int64_t, 3> fixed_global{{{}}}, "
                       "fixed_local{{{}}};",
                       fmt::join(padded(candidate.global), ", "),
                       fmt::join(padded(candidate.local), ", ")));
      line("bool tied = true;");
      line("for (int d = 0; d < dims; ++d) {");
      line("  if (request_local && request_local[d] != fixed_local[d]) return false;");
      line("  if (fixed_global[d] != global[d]) tied = false;");
      line("  if (has_rule_local[d] && fixed_local[d] != rule_local[d]) tied = false;");
      line("  global[d] = fixed_global[d];");
      line("  local[d] = fixed_local[d];");
    } else if (rounded) {
      line("if (!request_local) return false;");
      line("bool tied = true;");
      line("for (int d = 0; d < dims; ++d) {");
      line("  if (request_local[d] < 1) return false;");
      line("  if (has_rule_local[d] && request_local[d] != rule_local[d]) tied = false;");
      line("  if (global[d] % request_local[d] != 0) tied = false;");
      line("}");
      line("if (tied) return false; // the tied kernel's launch: launch_" + std::to_string(m));
      line("for (int d = 0; d < dims; ++d) {");
      line("  local[d] = request_local[d];");
    } else {
      line("for (int d = 0; d < dims; ++d) {");
      line("  if (request_local) {");
      line("    if (request_local[d] < 1) return false;");
      line("    if (has_rule_local[d] && request_local[d] != rule_local[d]) return false;");
      line("    if (global[d] % request_local[d] != 0) return false; // not the tied kernel");
      line("    local[d] = request_local[d];");
      line("  } else {");
      line("    local[d] = rule_local[d]; // 0: the runtime chooses");
      line("  }");
    }
    if (!candidate.fixed_grid()) {
      line("  if (local[d] > 0) global[d] = (global[d] + local[d] - 1) / local[d] * local[d];");
      line("  global[d] = std::max<std::int64_t>(global[d], 1);");
    }
    line("}");
    line("std::int64_t group = 1;");
    line("for (int d = 0; d < dims; ++d) {");
    line("  if (local[d] == 0) continue;");
    line("  if (global[d] % local[d] != 0 || local[d] > limits.max_work_item_sizes[d]) "
         "return false;");
    line("  group *= local[d];");
    line("}");
    line("if (group > limits.max_work_group_size) return false;");
    // What launch_refusal checks of the kernel launched: its local memory and barriers.
    auto kernel_checks = [&](const codegen::Kernel& launched, const std::string& indent) {
      line(indent + fmt::format("const std::int64_t local_bytes = e.size({});",
                                emitter.sizes_only(launched.local_bytes(), "local memory")));
      line(indent + "if (!e.ok || local_bytes > limits.local_memory_bytes) return false;");
      for (const codegen::BarrierRecord& barrier : launched.barriers)
        for (const codegen::LoopContext& loop : barrier.loops) {
          if (!loop.primitive.starts_with("mapLcl") || loop.kind == codegen::cl::LoopKind::Block ||
              loop.kind == codegen::cl::LoopKind::None)
            continue;
          const int dim = std::clamp(loop.dim, 0, 2);
          const std::optional<std::string> trip = emitter.emit(loop.trip);
          if (!trip) {
            line(indent + fmt::format("return false; // a barrier in {} with a trip count of "
                                      "more than the sizes",
                                      loop.primitive));
            continue;
          }
          line(indent + fmt::format("if (local[{0}] <= 0 || e.integer({1}) % local[{0}] != 0 || "
                                    "!e.ok) return false; // a barrier in {2}",
                                    dim, *trip, loop.primitive));
        }
    };
    if (candidate.fixed_grid()) {
      line("if (tied) {");
      kernel_checks(kernel, "  ");
      line("} else {");
      kernel_checks(free_kernel, "  ");
      line("}");
    } else {
      kernel_checks(rounded ? free_kernel : kernel, "");
    }
    if (candidate.fixed_grid())
      line(fmt::format("out = Launch{{{}, dims, global, local, true, !tied}};", m));
    else
      line(fmt::format("out = Launch{{{}, dims, global, local, {}, {}}};", m,
                       rounded ? "false" : "true", rounded ? "true" : "false"));
    line("return true;");
  }
  return fmt::format("inline bool launch_{}{}(const std::int64_t* s, const std::int64_t* "
                     "request_local, const Limits& limits, Launch& out) {{\n{}}}\n",
                     rounded ? "rounded_" : "", m, body);
}

/// The two kernels of each portfolio member: the tied one (its maps over the threads) and the
/// free-thread one (its maps as loops), which share one argument table.
struct MemberKernels {
  std::vector<codegen::Kernel> tied, free;
};

MemberKernels generate_member_kernels(const AdaptiveArtifact& artifact) {
  MemberKernels out;
  for (const AdaptiveCandidate& c : artifact.portfolio) {
    const ir::Module module = parse::parse_module(c.printed, "<adaptive member>");
    out.tied.push_back(codegen::generate(module.main(), codegen::Options{true, false}));
    out.free.push_back(codegen::generate(module.main(), codegen::Options{false, false}));
    // One argument table serves both kernels of a member.
    const auto& tied_args = out.tied.back().args;
    const auto& free_args = out.free.back().args;
    LIFTX_INTERNAL_CHECK(tied_args.size() == free_args.size() &&
                             std::equal(tied_args.begin(), tied_args.end(), free_args.begin(),
                                        [](const auto& a, const auto& b) {
                                          return a.name == b.name && a.role == b.role &&
                                                 a.kind == b.kind;
                                        }),
                         "the free-thread kernel of an adaptive member takes other arguments");
  }
  return out;
}

/// The header's comment (how to use it), its includes, and the opening of its namespaces.
std::string header_prologue(const AdaptiveArtifact& artifact) {
  return fmt::format(
      R"(// Generated by `liftx adapt --emit header` for {program} on {device} (profile {profile}).
// Standalone C++17: no liftx needed. Do not edit; regenerate it.
//
// Per call: fill Limits from clGetDeviceInfo (CL_DEVICE_MAX_WORK_GROUP_SIZE,
// CL_DEVICE_MAX_WORK_ITEM_SIZES, CL_DEVICE_LOCAL_MEM_SIZE), call choose(sizes, limits) with the
// sizes in the order of kSizeNames, then build kMembers[c->member].source (rounded_source where
// c->rounded; cache one program per member and kind), set the arguments in the order of
// kMembers[m].args (buffers of buffer_elements(...) elements of their kind; Local: that many
// elements of local memory, a null pointer; Size: the size as a cl_int), and enqueue the
// launch's dims, global and local sizes.
// Not re-checked here: liftx refuses a launch whose 32-bit index arithmetic could pass
// 2^31 - 1 (grids beyond about 2^31 elements); choose() does not.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <utility>

namespace liftx_adaptive {{
namespace {ns} {{

)",
      fmt::arg("program", artifact.program_name), fmt::arg("device", artifact.device),
      fmt::arg("profile", artifact.profile), fmt::arg("ns", identifier(artifact.program_name)));
}

/// The size names and the public types: Role, Kind, Arg, Member, Limits, Launch.
std::string size_names_and_types(const std::vector<std::string>& names) {
  std::vector<std::string> quoted;
  for (const std::string& n : names)
    quoted.push_back(cpp_string(n));
  return fmt::format(R"(inline constexpr int kSizeCount = {size_count};
inline constexpr const char* kSizeNames[] = {{{size_names}}};

enum class Role {{ Input, Output, Temporary, Local, Size }};
enum class Kind {{ Bool, Int, Float, Double }};

struct Arg {{
  Role role;
  const char* name;
  Kind kind;
  int index; ///< Input: the program parameter; Output: the component of a tuple result
}};

struct Member {{
  const char* description;
  const char* kernel_name;
  const char* source; ///< OpenCL C, one program for every shape
  /// The same kernel with its maps as loops over their ranges: for launches whose global size is
  /// rounded up to the work-group, and fixed grids (Launch::rounded); the same arguments.
  const char* rounded_kernel_name;
  const char* rounded_source;
  int dims;
  std::array<std::int64_t, 3> local; ///< the work-group it was measured with
  /// A free-thread member's fixed grid, which it runs with at every shape; {{0, 0, 0}}: its
  /// global size follows the shape.
  std::array<std::int64_t, 3> fixed_global;
  const Arg* args;
  int arg_count;
}};

/// The device's limits (clGetDeviceInfo).
struct Limits {{
  std::int64_t max_work_group_size = 0;
  std::array<std::int64_t, 3> max_work_item_sizes{{0, 0, 0}};
  std::int64_t local_memory_bytes = 0;
}};

struct Launch {{
  int member = 0;
  int dims = 1;
  std::array<std::int64_t, 3> global{{1, 1, 1}};
  std::array<std::int64_t, 3> local{{1, 1, 1}};
  /// false: fitted to this shape (a launch nobody measured): the work-group shrunk, or rounded.
  bool as_measured = true;
  /// Build rounded_source (the free-thread kernel), not source: the work-group kept and the
  /// global size rounded up to it, or a fixed-grid member's grid.
  bool rounded = false;
}};

)",
                     fmt::arg("size_count", names.size()),
                     fmt::arg("size_names", fmt::format("{}", fmt::join(quoted, ", "))));
}

/// detail::Eval, the exact arithmetic of the launch rules and buffer lengths.
std::string exact_arithmetic() {
  return R"(namespace detail {

/// Exact rational arithmetic over the sizes, as liftx's arith::evaluate: `ok` turns false on an
/// inexact division, a division by zero or an overflow.
struct Eval {
  struct Q {
    __int128 n;
    __int128 d;
  };
  const std::int64_t* s;
  bool ok = true;

  static __int128 gcd(__int128 a, __int128 b) {
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b != 0) {
      const __int128 t = a % b;
      a = b;
      b = t;
    }
    return a;
  }
  Q make(__int128 n, __int128 d) {
    const __int128 limit = (static_cast<__int128>(1) << 100);
    if (d == 0 || n > limit || n < -limit || d > limit || d < -limit) {
      ok = false;
      return Q{0, 1};
    }
    if (d < 0) {
      n = -n;
      d = -d;
    }
    const __int128 g = gcd(n, d);
    return g > 1 ? Q{n / g, d / g} : Q{n, d};
  }
  Q c(std::int64_t n, std::int64_t d) { return make(n, d); }
  Q v(int i) { return Q{s[i], 1}; }
  Q add(Q a, Q b) { return make(a.n * b.d + b.n * a.d, a.d * b.d); }
  Q mul(Q a, Q b) { return make(a.n * b.n, a.d * b.d); }
  Q pow(Q base, int k) {
    if (k < 0) {
      base = make(base.d, base.n);
      k = -k;
    }
    Q r{1, 1};
    for (int i = 0; i < k && ok; ++i)
      r = mul(r, base);
    return r;
  }
  std::int64_t integer(Q q) {
    if (q.d != 1 || q.n > INT64_MAX || q.n < INT64_MIN) {
      ok = false;
      return 0;
    }
    return static_cast<std::int64_t>(q.n);
  }
  /// A size: an integer, not negative.
  std::int64_t size(Q q) {
    const std::int64_t value = integer(q);
    if (value < 0) ok = false;
    return value;
  }
  Q div(Q a, Q b) {
    const std::int64_t x = integer(a), y = integer(b);
    if (!ok || y == 0) {
      ok = false;
      return Q{0, 1};
    }
    return Q{y == -1 ? -static_cast<__int128>(x) : x / y, 1};
  }
  Q mod(Q a, Q b) {
    const std::int64_t x = integer(a), y = integer(b);
    if (!ok || y == 0) {
      ok = false;
      return Q{0, 1};
    }
    return Q{y == -1 ? 0 : x % y, 1};
  }
  int cmp(Q a, Q b) {
    const __int128 l = a.n * b.d, r = b.n * a.d;
    return l < r ? -1 : l > r ? 1 : 0;
  }
  Q min(Q a, Q b) { return cmp(a, b) <= 0 ? a : b; }
  Q max(Q a, Q b) { return cmp(a, b) <= 0 ? b : a; }
};

)";
}

/// Per member: its launch at given sizes, as codegen::prepare_launch computes it with a
/// requested work-group (request_local) or the kernel's own rule (null), and refuses it.
std::string launch_functions(const AdaptiveArtifact& artifact, const MemberKernels& kernels,
                             const ExprEmitter& emitter, const std::vector<std::string>& names) {
  std::string out;
  for (size_t m = 0; m < kernels.tied.size(); ++m) {
    out += launch_function(m, artifact.portfolio[m], kernels.tied[m], kernels.free[m], false,
                           emitter, names) +
           "\n";
    out += launch_function(m, artifact.portfolio[m], kernels.tied[m], kernels.free[m], true,
                           emitter, names) +
           "\n";
  }
  return out;
}

/// Buffer lengths: per member a switch over its arguments, then one over the members; closes
/// namespace detail.
std::string buffer_lengths(const std::vector<codegen::Kernel>& kernels,
                           const ExprEmitter& emitter) {
  std::string out;
  for (size_t m = 0; m < kernels.size(); ++m) {
    out += fmt::format("inline std::int64_t elements_{}(int arg, const std::int64_t* s) {{\n"
                       "  Eval e{{s}};\n  std::int64_t n = -1;\n  switch (arg) {{\n",
                       m);
    for (size_t a = 0; a < kernels[m].args.size(); ++a) {
      const codegen::KernelArg& arg = kernels[m].args[a];
      if (arg.is_buffer())
        out += fmt::format("  case {}:\n    n = e.size({});\n    break;\n", a,
                           emitter.sizes_only(arg.elements, "buffer length"));
    }
    out += "  default:\n    return -1;\n  }\n  return e.ok ? n : -1;\n}\n\n";
  }
  out += "inline std::int64_t elements_of(int member, int arg, const std::int64_t* s) {\n"
         "  switch (member) {\n";
  for (size_t m = 0; m < kernels.size(); ++m)
    out += fmt::format("  case {0}:\n    return elements_{0}(arg, s);\n", m);
  out += "  default:\n    return -1;\n  }\n}\n\n} // namespace detail\n\n";
  return out;
}

/// Member m's argument table (kArgs<m>) and its two sources (kSource<m>, kRoundedSource<m>).
std::string member_arguments_and_sources(size_t m, const MemberKernels& kernels) {
  std::string out = fmt::format("inline constexpr Arg kArgs{}[] = {{\n", m);
  for (const codegen::KernelArg& arg : kernels.tied[m].args) {
    if (arg.storage)
      throw NotImplemented(fmt::format("a header for kernels that store grids in a {} layout "
                                       "group (the header binds one buffer per grid)",
                                       ir::layout_text(*arg.storage)));
    const int index = arg.role == codegen::KernelArg::Role::Input    ? arg.input_index
                      : arg.role == codegen::KernelArg::Role::Output ? arg.output_index
                                                                     : -1;
    static constexpr const char* kKinds[] = {"Bool", "Int", "Float", "Double"};
    out += fmt::format("    {{Role::{}, {}, Kind::{}, {}}},\n", role_name(arg.role),
                       cpp_string(arg.name), kKinds[static_cast<int>(arg.kind)], index);
  }
  out += "};\n\n";
  out += fmt::format("inline constexpr const char* kSource{} =\n    {};\n\n", m,
                     cpp_string(kernels.tied[m].source));
  out += fmt::format("inline constexpr const char* kRoundedSource{} =\n    {};\n\n", m,
                     cpp_string(kernels.free[m].source));
  return out;
}

/// The members: per member its arguments and sources, then kMembers and kMemberCount.
std::string member_table(const AdaptiveArtifact& artifact, const MemberKernels& kernels) {
  std::string out;
  for (size_t m = 0; m < kernels.tied.size(); ++m)
    out += member_arguments_and_sources(m, kernels);
  out += "inline constexpr Member kMembers[] = {\n";
  for (size_t m = 0; m < kernels.tied.size(); ++m) {
    const AdaptiveCandidate& member = artifact.portfolio[m];
    out +=
        fmt::format("    {{{}, {}, kSource{}, {}, kRoundedSource{}, {}, {{{}}}, {{{}}}, kArgs{}, "
                    "{}}},\n",
                    cpp_string(member.describe()), cpp_string(kernels.tied[m].name), m,
                    cpp_string(kernels.free[m].name), m, member.local.size(),
                    fmt::join(padded(member.local), ", "),
                    fmt::join(padded(member.global, member.fixed_grid() ? 1 : 0), ", "), m,
                    kernels.tied[m].args.size());
  }
  out += fmt::format("}};\ninline constexpr int kMemberCount = {};\n\n", kernels.tied.size());
  return out;
}

/// The selector's data (reopening namespace detail): the training shapes, each one's members
/// fastest first, and the fallback member.
std::string selector_tables(const AdaptiveArtifact& artifact, const std::vector<std::string>& names,
                            size_t member_count) {
  std::string out = "namespace detail {\n\n";
  out += fmt::format("inline constexpr int kShapeCount = {};\n", artifact.selector.shapes.size());
  out += fmt::format("inline constexpr std::int64_t kShapes[{}][{}] = {{\n",
                     std::max<size_t>(artifact.selector.shapes.size(), 1),
                     std::max<size_t>(names.size(), 1));
  for (const Sizes& shape : artifact.selector.shapes) {
    std::vector<int64_t> values;
    for (const std::string& n : names)
      values.push_back(shape.at(n));
    out += fmt::format("    {{{}}},\n", fmt::join(values, ", "));
  }
  out += "};\n";
  out += "/// Per training shape, the members that ran there, fastest first (-1 ends a row).\n";
  out += fmt::format("inline constexpr int kOrder[{}][{}] = {{\n",
                     std::max<size_t>(artifact.selector.order.size(), 1), member_count + 1);
  for (const std::vector<size_t>& row : artifact.selector.order) {
    std::vector<int> values(row.begin(), row.end());
    values.push_back(-1);
    out += fmt::format("    {{{}}},\n", fmt::join(values, ", "));
  }
  out += "};\n";
  out += fmt::format("inline constexpr int kFallback = {};\n\n",
                     artifact.fallback ? static_cast<int>(*artifact.fallback) : -1);
  return out;
}

/// launch_at and launch_rounded_at: switches from a member's index to its launch functions.
std::string launch_dispatch(size_t member_count) {
  std::string out =
      "inline bool launch_at(int member, const std::int64_t* s, const std::int64_t* "
      "request_local,\n"
      "                      const Limits& limits, Launch& out) {\n  switch (member) {\n";
  for (size_t m = 0; m < member_count; ++m)
    out += fmt::format("  case {0}:\n    return launch_{0}(s, request_local, limits, out);\n", m);
  out += "  default:\n    return false;\n  }\n}\n\n";
  out += "inline bool launch_rounded_at(int member, const std::int64_t* s, const std::int64_t* "
         "request_local,\n"
         "                              const Limits& limits, Launch& out) {\n  switch (member) "
         "{\n";
  for (size_t m = 0; m < member_count; ++m)
    out += fmt::format(
        "  case {0}:\n    return launch_rounded_{0}(s, request_local, limits, out);\n", m);
  out += "  default:\n    return false;\n  }\n}\n\n";
  return out;
}

/// detail::member_at: a member's launch, measured or fitted to the shape.
std::string member_fitting() {
  return R"(/// The member with its measured work-group; else with each dimension of the work-group shrunk
/// to the largest divisor of the global size within it while that keeps at least half of its
/// work-items, else with its work-group and the global size rounded up (the rounded kernel).
inline std::optional<Launch> member_at(int member, const std::int64_t* s, const Limits& limits) {
  Launch launch;
  const Member& m = kMembers[member];
  if (launch_at(member, s, m.local.data(), limits, launch))
    return launch;
  Launch rule;
  if (!launch_at(member, s, nullptr, limits, rule))
    return std::nullopt;
  std::array<std::int64_t, 3> fitted{1, 1, 1};
  std::int64_t kept = 1, measured = 1;
  for (int d = 0; d < m.dims; ++d) {
    std::int64_t local = std::min(m.local[d], rule.global[d]);
    while (local > 1 && rule.global[d] % local != 0)
      --local;
    fitted[d] = std::max<std::int64_t>(local, 1);
    kept *= fitted[d];
    measured *= m.local[d];
  }
  if (2 * kept < measured && launch_rounded_at(member, s, m.local.data(), limits, launch))
    return launch;
  if (!launch_at(member, s, fitted.data(), limits, launch))
    return std::nullopt;
  launch.as_measured = false;
  return launch;
}

)";
}

/// The choice: training shapes nearest first, then the public buffer_elements and choose.
std::string shape_choice() {
  return R"(/// Training shapes, nearest first (squared distance of log2 sizes; ties in training order).
inline std::array<int, (kShapeCount > 0 ? kShapeCount : 1)> nearest_shapes(const std::int64_t* s) {
  std::array<int, (kShapeCount > 0 ? kShapeCount : 1)> order{};
  std::array<double, (kShapeCount > 0 ? kShapeCount : 1)> distance{};
  for (int i = 0; i < kShapeCount; ++i) {
    order[i] = i;
    double d = 0;
    for (int k = 0; k < kSizeCount; ++k) {
      const double delta = std::log2(double(s[k])) - std::log2(double(kShapes[i][k]));
      d += delta * delta;
    }
    distance[i] = d;
  }
  std::stable_sort(order.begin(), order.begin() + kShapeCount,
                   [&](int a, int b) { return distance[a] < distance[b]; });
  return order;
}

inline std::optional<Launch> first_in_order(const std::int64_t* s, const Limits& limits) {
  const auto shapes = nearest_shapes(s);
  for (int i = 0; i < kShapeCount; ++i)
    for (const int* p = kOrder[shapes[i]]; *p >= 0; ++p)
      if (std::optional<Launch> launch = member_at(*p, s, limits))
        return launch;
  return std::nullopt;
}

} // namespace detail

/// The buffer length (elements) of argument `arg` of `member` at sizes `s`; -1 for a size
/// argument.
inline std::int64_t buffer_elements(int member, int arg, const std::int64_t* s) {
  return detail::elements_of(member, arg, s);
}

/// The member and launch for sizes `s` (kSizeCount values, each at least 1): the fastest member
/// at the nearest training shape that runs at `s`, else the next nearest shape's; a member runs
/// with its measured work-group where that divides the global size and fits, else with it
/// fitted (as_measured false); else the fallback member likewise. nullopt: none runs.
inline std::optional<Launch> choose(const std::int64_t* s, const Limits& limits) {
  for (int k = 0; k < kSizeCount; ++k)
    if (s[k] < 1)
      return std::nullopt;
  if (std::optional<Launch> launch = detail::first_in_order(s, limits))
    return launch;
  if (detail::kFallback >= 0)
    return detail::member_at(detail::kFallback, s, limits);
  return std::nullopt;
}

)";
}

} // namespace

std::string adaptive_header(const AdaptiveArtifact& artifact) {
  const std::vector<std::string>& names = artifact.selector.size_names;
  const ExprEmitter emitter(names);
  const MemberKernels kernels = generate_member_kernels(artifact);
  // One statement a section: the sections that throw (an expression the header cannot emit, a
  // grid in a layout group) throw in this order.
  std::string out = header_prologue(artifact);
  out += size_names_and_types(names);
  out += exact_arithmetic();
  out += launch_functions(artifact, kernels, emitter, names);
  out += buffer_lengths(kernels.tied, emitter);
  out += member_table(artifact, kernels);
  out += selector_tables(artifact, names, kernels.tied.size());
  out += launch_dispatch(kernels.tied.size());
  out += member_fitting();
  out += shape_choice();
  out += fmt::format("}} // namespace {}\n}} // namespace liftx_adaptive\n",
                     identifier(artifact.program_name));
  return out;
}

} // namespace liftx::adapt
