// Input-adaptive programs: the artifact of `liftx adapt` (adapt/adapt.hpp) loaded, its selector
// asked per shape, and the chosen member compiled once per shape and run.
#include "liftx/adaptive.hpp"
#include "adapt/adapt.hpp"
#include "api/internal.hpp"
#include "ir/interp/interp.hpp"
#include "ir/parse/parser.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>

namespace liftx {

struct AdaptiveProgram::Impl {
  explicit Impl(Program high_level) : program(std::move(high_level)) {}
  std::shared_ptr<Context::Impl> context;
  AdaptiveOptions options;
  std::string path;
  adapt::AdaptiveArtifact artifact;
  Program program;              ///< the high-level program: the reference of every check
  std::vector<Program> members; ///< the portfolio's lowered programs, parsed once
  std::vector<std::string> descriptions;
  std::vector<std::string> notes;

  /// Guards the caches below. Held while a member is chosen and compiled, so that two threads
  /// asking for the same new shape compile it once.
  std::mutex mutex;
  std::map<Sizes, std::optional<adapt::AdaptiveArtifact::Pick>> chosen;
  std::map<std::pair<size_t, Sizes>, Kernel> kernels;

  /// The member for `sizes` (cached), nullopt when none applies. UserError for bad sizes.
  std::optional<adapt::AdaptiveArtifact::Pick> try_choose_locked(const Sizes& sizes);
  /// The same, a UserError listing the members when none applies.
  adapt::AdaptiveArtifact::Pick choose_locked(const Sizes& sizes);
  /// "window tile_x=16 ..., local 2x8", or with the work-group fitted to the shape.
  std::string describe(const adapt::AdaptiveArtifact::Pick& pick) const;
  Kernel kernel_locked(const Sizes& sizes);
};

namespace {

namespace fs = std::filesystem;

AdaptiveProgram::Impl& checked(const std::shared_ptr<AdaptiveProgram::Impl>& impl) {
  LIFTX_USER_CHECK(impl, "the AdaptiveProgram is empty (load one first)");
  return *impl;
}

std::string sizes_text(const Sizes& sizes) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : sizes)
    parts.push_back(fmt::format("{}={}", name, value));
  return fmt::format("{}", fmt::join(parts, ","));
}

nlohmann::json read_json(const std::string& path) {
  std::error_code ec;
  LIFTX_USER_CHECK(fs::exists(path, ec),
                   "cannot read the adaptive program {}: no such file (`liftx adapt STENCIL.lift "
                   "--device D --shapes ... -o {}` writes one)",
                   path, path);
  LIFTX_USER_CHECK(!fs::is_directory(path, ec),
                   "cannot read the adaptive program {}: it is a directory", path);
  std::ifstream in(path);
  LIFTX_USER_CHECK(in.good(), "cannot read the adaptive program {}: {}", path,
                   std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  try {
    return nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw UserError(fmt::format("{} is not a liftx adaptive program (written by `liftx adapt`): "
                                "not JSON: {}",
                                path, e.what()));
  }
}

} // namespace

AdaptiveProgram AdaptiveProgram::load(Context& context, const std::string& path,
                                      const AdaptiveOptions& options) {
  const std::shared_ptr<Context::Impl>& ctx = KernelFactory::context_of(context);
  LIFTX_USER_CHECK(ctx, "the Context was moved from");
  adapt::AdaptiveArtifact artifact = adapt::adaptive_artifact_from(read_json(path), path);
  LIFTX_USER_CHECK(!artifact.portfolio.empty(), "{}: the adaptive program has an empty portfolio",
                   path);
  // What the file says is parsed and checked now, so that a damaged file fails here rather
  // than at some later run.
  auto damaged = [&](const std::string& why) {
    return UserError(fmt::format("{} is damaged: {}", path, why));
  };
  auto main_of = [&](const std::string& module, const std::string& what) {
    try {
      return parse::parse_module(module, fmt::format("{} ({})", path, what)).main();
    } catch (const UserError& e) {
      throw damaged(e.what());
    }
  };
  auto p = std::make_shared<Impl>(main_of(artifact.program_source, "program"));
  p->context = ctx;
  p->options = options;
  p->path = path;
  p->artifact = std::move(artifact);
  const adapt::AdaptiveArtifact& a = p->artifact;
  std::vector<std::string> names;
  for (const arith::Expr& v : p->program.size_vars())
    names.push_back(v.node().name);
  if (a.selector.size_names != names)
    throw damaged(fmt::format("the selector is for sizes {}, the program has sizes {}",
                              fmt::join(a.selector.size_names, ", "), fmt::join(names, ", ")));
  for (const Sizes& shape : a.selector.shapes) {
    std::vector<std::string> shape_names;
    for (const auto& [name, value] : shape)
      shape_names.push_back(name);
    if (shape_names != names)
      throw damaged(fmt::format("the training shape {} does not bind the sizes {}",
                                adapt::shape_text(shape), fmt::join(names, ", ")));
  }
  for (size_t m = 0; m < a.portfolio.size(); ++m) {
    const adapt::AdaptiveCandidate& c = a.portfolio[m];
    Program member = main_of(c.printed, fmt::format("portfolio member {}", m));
    if (!same_signature(member, p->program))
      throw damaged(fmt::format("portfolio member {} ({}) does not have the types of {}", m,
                                c.describe(), p->program.name));
    p->members.push_back(std::move(member));
    p->descriptions.push_back(c.describe());
  }

  // The choices are the fastest where they were measured; another device is refused unless the
  // application asks for it (the kernels stay correct there, not necessarily fast).
  const DeviceInfo& here = ctx->info;
  if (a.profile != here.key) {
    if (a.device != here.name) {
      LIFTX_USER_CHECK(options.allow_other_device,
                       "{} was measured on {} ({}), not on this Context's device {} ({}): its "
                       "choices are the fastest there. Run `liftx adapt` on this device "
                       "(--device {}), or set AdaptiveOptions::allow_other_device to use it anyway",
                       path, a.device, a.profile, here.name, here.key, here.spec);
      p->notes.push_back(fmt::format("measured on {}, not on this device ({}): the choices are "
                                     "that device's fastest, not necessarily this one's",
                                     a.device, here.name));
    } else {
      p->notes.push_back(fmt::format("measured on {} with another driver ({}; here {}): rerun "
                                     "`liftx adapt` if the driver changed the fastest variants",
                                     a.device, a.profile, here.key));
    }
  }
  AdaptiveProgram out;
  out.impl_ = std::move(p);
  return out;
}

std::optional<adapt::AdaptiveArtifact::Pick>
AdaptiveProgram::Impl::try_choose_locked(const Sizes& sizes) {
  interp::check_sizes(program, sizes);
  if (const auto it = chosen.find(sizes); it != chosen.end())
    return it->second;
  // Whether a member applies is whether it can run here; the space's policy against launches
  // with fewer work-groups than a GPU has compute units (min_work_groups) prunes what to measure
  // and is no reason to refuse a small grid (codegen::prepare_launch drops it too).
  DeviceLimits limits = context->device.profile.limits();
  limits.min_work_groups = 1;
  const std::optional<adapt::AdaptiveArtifact::Pick> pick = artifact.pick(sizes, limits);
  chosen.emplace(sizes, pick);
  return pick;
}

std::string AdaptiveProgram::Impl::describe(const adapt::AdaptiveArtifact::Pick& pick) const {
  if (pick.as_measured)
    return descriptions[pick.member];
  if (pick.rounded)
    return fmt::format("{} (global size rounded up to its work-group)", descriptions[pick.member]);
  return fmt::format("{} (work-group fitted to the shape: {})", descriptions[pick.member],
                     fmt::join(pick.local, "x"));
}

adapt::AdaptiveArtifact::Pick AdaptiveProgram::Impl::choose_locked(const Sizes& sizes) {
  const std::optional<adapt::AdaptiveArtifact::Pick> pick = try_choose_locked(sizes);
  if (!pick) {
    std::string members;
    for (size_t m = 0; m < descriptions.size(); ++m)
      members += fmt::format("\n  #{} {}", m, descriptions[m]);
    throw UserError(fmt::format(
        "no member of the adaptive program {} ({}) applies at {} on {}: each has a tile, split "
        "or work-group that does not divide these sizes or does not fit the device (add such a "
        "shape to `liftx adapt --shapes`):{}",
        artifact.program_name, path, sizes_text(sizes), context->info.name, members));
  }
  return *pick;
}

Kernel AdaptiveProgram::Impl::kernel_locked(const Sizes& sizes) {
  const adapt::AdaptiveArtifact::Pick pick = choose_locked(sizes);
  const size_t member = pick.member;
  auto key = std::make_pair(member, sizes);
  if (const auto it = kernels.find(key); it != kernels.end())
    return it->second;
  const Program& lowered = members[member];
  // The member's work-group with the threads tied to the mapped lengths, as it was measured, or
  // fitted to the shape where it does not divide the global size (pick() checked it does now);
  // or the member's fixed free-thread grid.
  exec::RunOptions run;
  run.local = pick.local;
  run.global = pick.global; // a fixed free-thread grid; empty: the launch rule's
  run.check = true;
  run.time = false;
  run.roofline = false;
  run.seed = options.seed;
  run.tolerance = options.tolerance;
  run.reference = &program; // the high-level stencil: the member must compute what it means
  const std::string variant = fmt::format("adaptive #{} {}", member, describe(pick));
  Kernel kernel = translating_opencl_errors([&] {
    std::lock_guard device_lock(context->mutex);
    if (options.verify) {
      const exec::RunReport report = exec::run_program(context->device, lowered, sizes, run);
      ++context->stats.verifications;
      if (report.status != runtime::Status::ok)
        throw kernel_error(report.status,
                           fmt::format("the kernel of {} ({}) failed its check on {} at {}: {}",
                                       program.name, variant, context->info.name, sizes_text(sizes),
                                       report.message));
    }
    return KernelFactory::make(context, lowered, sizes, run, program.name, variant);
  });
  kernels.emplace(std::move(key), kernel);
  return kernel;
}

RunStats AdaptiveProgram::run(const Sizes& sizes, const std::vector<Input>& inputs,
                              const Output& output) const {
  return kernel(sizes).run(inputs, output);
}

RunStats AdaptiveProgram::run(const Sizes& sizes, const std::vector<Input>& inputs,
                              const std::vector<Output>& outputs) const {
  return kernel(sizes).run(inputs, outputs);
}

AdaptiveChoice AdaptiveProgram::choice(const Sizes& sizes) const {
  Impl& p = checked(impl_);
  std::lock_guard lock(p.mutex);
  const adapt::AdaptiveArtifact::Pick pick = p.choose_locked(sizes);
  return {pick.member, p.describe(pick)};
}

bool AdaptiveProgram::applies(const Sizes& sizes) const {
  Impl& p = checked(impl_);
  std::lock_guard lock(p.mutex);
  return p.try_choose_locked(sizes).has_value();
}

Kernel AdaptiveProgram::kernel(const Sizes& sizes) const {
  Impl& p = checked(impl_);
  std::lock_guard lock(p.mutex);
  return p.kernel_locked(sizes);
}

const std::string& AdaptiveProgram::program_name() const {
  return checked(impl_).program.name;
}
const Program& AdaptiveProgram::program() const {
  return checked(impl_).program;
}
bool AdaptiveProgram::is_for(const Program& other) const {
  // Both sides go through one print-and-parse first, so that programs whose user functions were
  // written with other blanks around their bodies (an artifact of an older liftx) compare alike.
  auto canonical = [](const Program& q) {
    return print_program(parse_program(print_program(q), "", "<adaptive program>"));
  };
  return canonical(other) == canonical(checked(impl_).program);
}
const std::string& AdaptiveProgram::path() const {
  return checked(impl_).path;
}
const std::string& AdaptiveProgram::trained_on() const {
  return checked(impl_).artifact.device;
}
std::vector<std::string> AdaptiveProgram::portfolio() const {
  return checked(impl_).descriptions;
}
std::vector<Sizes> AdaptiveProgram::training_shapes() const {
  const adapt::AdaptiveArtifact& a = checked(impl_).artifact;
  return {a.selector.shapes.begin(), a.selector.shapes.end()};
}
const std::vector<std::string>& AdaptiveProgram::notes() const {
  return checked(impl_).notes;
}

} // namespace liftx
