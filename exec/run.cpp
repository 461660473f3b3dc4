#include "exec/run.hpp"

#include "exec/flops.hpp"
#include "exec/verify.hpp"
#include "ir/host_iteration.hpp"
#include "ir/storage.hpp"

#include "runtime/build_cache.hpp"
#include "runtime/cache_dir.hpp"
#include "runtime/roofline.hpp"
#include "support/error.hpp"
#include "target/profile.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <tuple>

namespace liftx::exec {

namespace {

/// `options`' launch request on `device` (its warp streams' rows where the device keeps them,
/// codegen::prepare_launch decides from its limits, unless the options say where).
codegen::LaunchRequest request_on(const runtime::Device& device, const RunOptions& options) {
  codegen::LaunchRequest request = options.request();
  // Instrumented kernels count per copy of the code: one copy.
  if (!options.interior_tiles && !options.instrument)
    request.interior_tiles = interior_tiles_on(device.profile);
  return request;
}

/// Whether `kernel` (and its tail) runs the copy of its code for interior tiles at `sizes`: at
/// least 3 tiles along every dimension that decides it.
bool sees_interior_tiles(const codegen::Kernel& kernel, const Sizes& sizes) {
  for (const arith::Expr& count : kernel.interior_tile_counts)
    if (arith::evaluate(count, sizes) < 3)
      return false;
  return !kernel.tail || sees_interior_tiles(*kernel.tail, sizes);
}

/// Whether `program`, whose kernel is `kernel`, runs at `sizes`: its splits and tiles divide them,
/// and so do the multiples its aligned vector accesses were generated for; its shifted tilings
/// fit, margins included (Kernel::size_conditions).
bool runs_at(const codegen::Kernel& kernel, const ir::Program& program, const Sizes& sizes) {
  for (const codegen::Kernel* k = &kernel; k; k = k->tail.get()) {
    for (const auto& [name, divisor] : k->size_divisors)
      if (const auto it = sizes.find(name); it != sizes.end() && it->second % divisor != 0)
        return false;
    for (const codegen::Kernel::SizeCondition& condition : k->size_conditions)
      try {
        if (arith::evaluate(condition.at_least_zero, sizes) < 0)
          return false;
      } catch (const UserError&) {
        return false;
      }
  }
  try {
    interp::check_sizes(program, sizes);
  } catch (const UserError&) {
    return false;
  }
  return true;
}

/// Whether a check at `sizes` checks what the run at other sizes runs: the kernel runs there and
/// runs its interior tiles' copy (runs_at first: the tile counts are exact divisions).
bool checks_the_run(const codegen::Kernel& kernel, const ir::Program& program, const Sizes& sizes) {
  return runs_at(kernel, program, sizes) && sees_interior_tiles(kernel, sizes);
}

/// `check` doubled, each size up to the run's, until it checks the run (checks_the_run: tiles
/// that divide a size divide its double; the run's sizes are the last resort). A check size the
/// tiles do not divide was the variant's failure before (`collect --check-size M=32,N=32`
/// recorded tiles of 64 as out of resources): the check is of the sizes, not of the variant.
Sizes covering_check_sizes(const codegen::Kernel& kernel, const ir::Program& program, Sizes check,
                           const Sizes& run) {
  while (!checks_the_run(kernel, program, check) && check != run)
    for (auto& [name, value] : check) {
      const auto limit = run.find(name);
      value = limit == run.end() ? 2 * value : std::min(limit->second, 2 * value);
    }
  return check;
}

/// Element size of a kernel buffer; bool buffers are not supported by the host side yet.
size_t element_bytes(ir::ScalarKind kind) {
  if (kind == ir::ScalarKind::Bool)
    throw NotImplemented("bool arrays as kernel buffers");
  return codegen::scalar_bytes(kind);
}

int64_t evaluate_size(const arith::Expr& e, const Sizes& sizes, const char* what) {
  int64_t value = arith::evaluate(e, sizes);
  LIFTX_USER_CHECK(value >= 0, "{} evaluates to {} (negative)", what, value);
  return value;
}

/// Host values as the bytes of a device buffer of `kind`.
std::vector<unsigned char> to_bytes(const interp::HostArray& a, ir::ScalarKind kind) {
  size_t width = element_bytes(kind);
  std::vector<unsigned char> bytes(a.data.size() * width);
  for (size_t i = 0; i < a.data.size(); ++i) {
    unsigned char* at = bytes.data() + i * width;
    if (kind == ir::ScalarKind::Float) {
      float v = static_cast<float>(a.data[i]);
      std::memcpy(at, &v, 4);
    } else if (kind == ir::ScalarKind::Int) {
      int32_t v = static_cast<int32_t>(a.data[i]);
      std::memcpy(at, &v, 4);
    } else {
      std::memcpy(at, &a.data[i], 8);
    }
  }
  return bytes;
}

/// One output buffer of a kernel (a tuple result has one per component).
struct OutputBuffer {
  cl::Buffer buffer;
  size_t bytes = 0;
  ir::ScalarKind kind = ir::ScalarKind::Float;
};

/// A built kernel with every argument set: inputs uploaded, outputs and temporaries allocated.
struct BoundKernel {
  runtime::BuildResult build;
  runtime::Kernel kernel;
  std::vector<OutputBuffer> outputs; ///< one per component of a tuple result, in order
  cl::Buffer counts;                 ///< instrumented kernels
  cl::Buffer first_index;            ///< instrumented kernels
  std::vector<cl::Buffer> keep_alive;
  double bytes_moved = 0;
  /// Host-side iteration (codegen::Kernel::launches > 1, or a tail): the argument positions of
  /// the iterated input and of the output, the input as uploaded (never written) and the second
  /// buffer the launches alternate with the output.
  int64_t launches = 1;       ///< of this kernel
  int64_t total_launches = 1; ///< with the tail's
  cl_uint iterated_arg = 0;
  cl_uint output_arg = 0;
  cl::Buffer iterated_input;
  cl::Buffer ping;
  std::map<int, cl::Buffer> input_buffers; ///< by input index
  /// codegen::Kernel::tail bound: its own arguments, this kernel's inputs, output and buffers.
  std::unique_ptr<BoundKernel> tail;
  cl::NDRange tail_global, tail_local;
};

/// The buffer launch `k` of a host iteration writes: the output for the last launch, and
/// alternately the second buffer before it, so that launch k reads what launch k - 1 wrote.
const cl::Buffer& iteration_destination(const BoundKernel& b, int64_t k) {
  return codegen::launch_writes_output(k, b.total_launches) ? b.outputs[0].buffer : b.ping;
}

/// Sets the buffers of launch `k` of a host iteration (the head's launches, then the tail's):
/// the first reads the input.
void set_iteration_buffers(BoundKernel& b, int64_t k) {
  BoundKernel& launched = k < b.launches ? b : *b.tail;
  const cl::Buffer& source = k == 0 ? b.iterated_input : iteration_destination(b, k - 1);
  runtime::check_cl(launched.kernel.get().setArg(launched.iterated_arg, source),
                    "setting the iterated input");
  runtime::check_cl(launched.kernel.get().setArg(launched.output_arg, iteration_destination(b, k)),
                    "setting the iterated output");
}

/// What runs before launch k of the program: a host iteration's buffer swap, else nothing.
std::function<void(int64_t)> before_each_launch(BoundKernel& b) {
  if (b.total_launches == 1)
    return [](int64_t) {};
  return [&b](int64_t k) { set_iteration_buffers(b, k); };
}

/// The kernels of the whole program in launch order: this one, then its tail's.
std::vector<runtime::LaunchStage> launch_stages(BoundKernel& b, const cl::NDRange& global,
                                                const cl::NDRange& local) {
  std::vector<runtime::LaunchStage> stages{{&b.kernel.get(), global, local, b.launches}};
  if (b.tail)
    stages.push_back({&b.tail->kernel.get(), b.tail_global, b.tail_local, b.tail->launches});
  return stages;
}

/// Runs the whole program once: one launch, or every launch of a host iteration. Returns its
/// profiled time in ms.
double run_once(runtime::Device& device, BoundKernel& b, const cl::NDRange& global,
                const cl::NDRange& local) {
  return runtime::run_launch_stages(device, launch_stages(b, global, local), before_each_launch(b));
}

runtime::Timing time_runs(runtime::Device& device, BoundKernel& b, const cl::NDRange& global,
                          const cl::NDRange& local, int warmup, int repeat) {
  return runtime::time_launch_stages(device, launch_stages(b, global, local), before_each_launch(b),
                                     warmup, repeat);
}

/// A read-only device buffer holding `bytes` (at least 4: OpenCL refuses empty buffers).
cl::Buffer upload_bytes(runtime::Device& device, std::vector<unsigned char> bytes,
                        const std::string& name) {
  bytes.resize(std::max<size_t>(bytes.size(), 4));
  cl_int err = CL_SUCCESS;
  cl::Buffer buffer(device.context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes.size(),
                    bytes.data(), &err);
  runtime::check_cl(err, fmt::format("allocating input {}", name));
  return buffer;
}

cl::Buffer upload(runtime::Device& device, const interp::HostArray& host, ir::ScalarKind kind,
                  const std::string& name) {
  return upload_bytes(device, to_bytes(host, kind), name);
}

/// The grids `group` stores together, packed in its layout, in one device buffer.
cl::Buffer upload_group(runtime::Device& device, const std::vector<interp::HostArray>& inputs,
                        const ir::StorageGroup& group, ir::ScalarKind kind,
                        const std::string& name) {
  std::vector<std::vector<unsigned char>> fields;
  std::vector<const unsigned char*> pointers;
  const size_t elements = inputs.at(group.fields.at(0)).data.size();
  for (size_t f : group.fields) {
    LIFTX_INTERNAL_CHECK(inputs.at(f).data.size() == elements,
                         "the grids of a layout group differ in size");
    fields.push_back(to_bytes(inputs.at(f), kind));
    pointers.push_back(fields.back().data());
  }
  return upload_bytes(
      device,
      ir::pack_grids(group, pointers, inputs.at(group.fields.at(0)).shape, element_bytes(kind)),
      name);
}

/// Builds `kernel` and sets its arguments for `launch`. A host iteration's tail kernel is bound
/// with its `head`: it reads the head's input buffers and writes the head's output and second
/// buffer (set before each launch), nothing of its own.
BoundKernel bind_kernel(runtime::Device& device, const codegen::Kernel& kernel,
                        const codegen::Launch& launch, const std::vector<interp::HostArray>& inputs,
                        const Sizes& sizes, UploadedInputs* uploaded = nullptr,
                        const BoundKernel* head = nullptr) {
  runtime::BuildResult built = runtime::default_build_cache().build(device, kernel.source);
  BoundKernel b{built, runtime::Kernel(built.program, kernel.name), {}, {}, {}, {}, 0};
  auto bytes_of = [&](const codegen::KernelArg& a, const char* what) {
    return static_cast<size_t>(evaluate_size(a.elements, sizes, what)) * element_bytes(a.kind);
  };
  const size_t work_items = static_cast<size_t>(launch.work_items());
  for (const codegen::KernelArg& a : kernel.args) {
    switch (a.role) {
    case codegen::KernelArg::Role::Input: {
      if (a.storage) {
        for (size_t f : a.storage->fields)
          b.bytes_moved += static_cast<double>(inputs.at(f).data.size() * element_bytes(a.kind));
        b.keep_alive.push_back(uploaded ? uploaded->group_buffer(device, inputs, *a.storage, a.kind)
                                        : upload_group(device, inputs, *a.storage, a.kind, a.name));
        b.kernel.arg(b.keep_alive.back());
        break;
      }
      const interp::HostArray& host = inputs.at(a.input_index);
      b.bytes_moved += static_cast<double>(host.data.size() * element_bytes(a.kind));
      cl::Buffer buffer = head && head->input_buffers.contains(a.input_index)
                              ? head->input_buffers.at(a.input_index)
                          : uploaded ? uploaded->buffer(device, inputs, a.input_index, a.kind)
                                     : upload(device, host, a.kind, a.name);
      b.keep_alive.push_back(buffer);
      b.input_buffers[a.input_index] = buffer;
      if (a.input_index == kernel.iterated_input) {
        b.iterated_arg = b.kernel.next_index();
        b.iterated_input = buffer;
      }
      b.kernel.arg(buffer);
      break;
    }
    case codegen::KernelArg::Role::Output: {
      LIFTX_INTERNAL_CHECK(static_cast<size_t>(a.output_index) == b.outputs.size(),
                           "kernel output {} out of order", a.name);
      OutputBuffer out;
      if (head) {
        out = head->outputs.at(static_cast<size_t>(a.output_index));
      } else {
        out.kind = a.kind;
        out.bytes = bytes_of(a, "output size");
        out.buffer = runtime::allocate(device, std::max<size_t>(out.bytes, 4));
      }
      b.bytes_moved += static_cast<double>(out.bytes);
      b.output_arg = b.kernel.next_index();
      b.kernel.arg(out.buffer);
      b.outputs.push_back(std::move(out));
      break;
    }
    case codegen::KernelArg::Role::Temporary:
      b.keep_alive.push_back(
          runtime::allocate(device, std::max<size_t>(bytes_of(a, "temporary size"), 4)));
      b.kernel.arg(b.keep_alive.back());
      break;
    case codegen::KernelArg::Role::Local:
      b.kernel.arg(runtime::LocalMemory{std::max<size_t>(bytes_of(a, "local size"), 4)});
      break;
    case codegen::KernelArg::Role::Size:
      b.kernel.arg(static_cast<int32_t>(sizes.at(a.name)));
      break;
    case codegen::KernelArg::Role::Counters:
    case codegen::KernelArg::Role::FirstIndex: {
      // Per work-item slots: counters start at 0, first indices at -1.
      std::vector<int32_t> init(work_items * static_cast<size_t>(*a.elements.as_constant()) + 1,
                                a.role == codegen::KernelArg::Role::Counters ? 0 : -1);
      cl_int err = CL_SUCCESS;
      cl::Buffer buffer(device.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                        init.size() * sizeof(int32_t), init.data(), &err);
      runtime::check_cl(err, fmt::format("allocating {}", a.name));
      (a.role == codegen::KernelArg::Role::Counters ? b.counts : b.first_index) = buffer;
      b.kernel.arg(buffer);
      break;
    }
    }
  }
  b.launches = kernel.launches;
  b.total_launches = kernel.total_launches();
  if (b.total_launches > 1) {
    LIFTX_INTERNAL_CHECK(b.outputs.size() == 1 && b.iterated_input() != nullptr,
                         "a host iteration needs one output and its iterated input");
    if (head)
      return b; // the head's buffers and sequence
    b.ping = runtime::allocate(device, std::max<size_t>(b.outputs[0].bytes, 4));
    // Every launch reads and writes it all.
    b.bytes_moved *= static_cast<double>(b.total_launches);
  }
  return b;
}

BoundKernel bind_kernel(runtime::Device& device, const codegen::PreparedLaunch& prepared,
                        const std::vector<interp::HostArray>& inputs, const Sizes& sizes,
                        UploadedInputs* uploaded = nullptr) {
  BoundKernel b = bind_kernel(device, prepared.kernel, prepared.launch, inputs, sizes, uploaded);
  if (prepared.kernel.tail) {
    LIFTX_INTERNAL_CHECK(prepared.tail.has_value(), "a tail kernel without its launch");
    b.tail = std::make_unique<BoundKernel>(
        bind_kernel(device, *prepared.kernel.tail, *prepared.tail, inputs, sizes, uploaded, &b));
    std::tie(b.tail_global, b.tail_local) = ndranges(*prepared.tail);
  }
  return b;
}

} // namespace

std::pair<cl::NDRange, cl::NDRange> ndranges(const codegen::Launch& launch) {
  auto range = [&](const std::array<int64_t, 3>& n) {
    return launch.dims == 1   ? cl::NDRange(n[0])
           : launch.dims == 2 ? cl::NDRange(n[0], n[1])
                              : cl::NDRange(n[0], n[1], n[2]);
  };
  return {range(launch.global),
          launch.local_given() ? range(launch.local) : runtime::runtime_chooses_local()};
}

namespace {

/// The bytes an output buffer holds now.
std::vector<unsigned char> read_output(runtime::Device& device, const OutputBuffer& out) {
  std::vector<unsigned char> bytes(out.bytes);
  if (out.bytes > 0)
    runtime::check_cl(
        device.queue.enqueueReadBuffer(out.buffer, CL_TRUE, 0, out.bytes, bytes.data()),
        "reading the output");
  return bytes;
}

/// Reads one output buffer back in chunks and compares each with the interpreter's values as it
/// arrives (a whole 8192^2 output would be a 268 MB host copy first). A tuple result is one
/// buffer per component: buffer `component` of `components` holds every components-th value of
/// `want` (the interpreter keeps components innermost).
Verification verify_output(runtime::Device& device, const OutputBuffer& out,
                           const interp::HostArray& want, double tolerance, size_t component,
                           size_t components) {
  Verification v;
  v.checked = true;
  const size_t expected = want.data.size() / components;
  v.elements = static_cast<int64_t>(expected);
  const size_t width = element_bytes(out.kind);
  const size_t produced = out.bytes / width;
  const std::string which =
      components > 1 ? fmt::format("output {} of {}, ", component, components) : "";
  if (produced != expected || want.data.size() % components != 0) {
    v.mismatches = v.elements;
    v.first_mismatch = fmt::format("{}the kernel produced {} elements, the interpreter {}", which,
                                   produced, expected);
    return v;
  }
  const Tolerance within{tolerance,
                         output_floor(want.data.data() + component, expected, components)};
  constexpr size_t kChunkBytes = size_t{64} << 20; // a multiple of every element width
  std::vector<unsigned char> chunk(std::min(out.bytes, kChunkBytes));
  ElementCheck all;
  for (size_t offset = 0; offset < out.bytes; offset += chunk.size()) {
    const size_t bytes = std::min(chunk.size(), out.bytes - offset);
    runtime::check_cl(
        device.queue.enqueueReadBuffer(out.buffer, CL_TRUE, offset, bytes, chunk.data()),
        "reading the output");
    all.merge(check_elements(out.kind, chunk.data(), offset / width, bytes / width,
                             want.data.data() + component, components, within));
  }
  v.mismatches = all.mismatches;
  v.unwritten = all.unwritten;
  v.max_abs_error = all.max_abs_error;
  if (all.mismatches > 0) {
    const size_t i = all.first_mismatch;
    const double w = want.data[i * components + component];
    v.first_mismatch =
        all.first_unwritten
            ? fmt::format("{}element {} was never written (interpreter {:.9g})", which, i, w)
            : fmt::format("{}element {}: kernel {:.9g}, interpreter {:.9g}", which, i,
                          all.first_got, w);
  }
  v.passed = v.mismatches == 0;
  return v;
}

/// Runs once with the outputs poisoned and compares every element with `want` (every output of a
/// tuple result: the counts add up, the first mismatch is the first output's that has one).
Verification run_and_verify(runtime::Device& device, BoundKernel& bound, const cl::NDRange& global,
                            const cl::NDRange& local, const interp::HostArray& want,
                            double tolerance) {
  for (const OutputBuffer& out : bound.outputs)
    runtime::poison(device, out.buffer, out.bytes);
  if (bound.total_launches > 1)
    runtime::poison(device, bound.ping, bound.outputs[0].bytes);
  run_once(device, bound, global, local);
  Verification all;
  all.checked = true;
  for (size_t k = 0; k < bound.outputs.size(); ++k) {
    const OutputBuffer& out = bound.outputs[k];
    Verification v = verify_output(device, out, want, tolerance, k, bound.outputs.size());
    all.elements += v.elements;
    all.unwritten += v.unwritten;
    all.max_abs_error = std::max(all.max_abs_error, v.max_abs_error);
    if (all.mismatches == 0)
      all.first_mismatch = v.first_mismatch;
    all.mismatches += v.mismatches;
  }
  all.passed = all.mismatches == 0;
  return all;
}

/// Reads every output buffer back and writes it as float32 (one file per output).
std::vector<std::string> write_outputs(runtime::Device& device, const BoundKernel& bound,
                                       const std::vector<int64_t>& shape, const std::string& path) {
  std::vector<std::string> paths = interp::component_paths(path, bound.outputs.size());
  for (size_t k = 0; k < bound.outputs.size(); ++k) {
    const OutputBuffer& out = bound.outputs[k];
    const std::vector<unsigned char> bytes = read_output(device, out);
    interp::HostArray host;
    host.kind = out.kind;
    host.shape = shape;
    const size_t width = element_bytes(out.kind);
    for (size_t i = 0; i + width <= bytes.size(); i += width) {
      bool poisoned = false;
      host.data.push_back(output_element(out.kind, bytes.data() + i, &poisoned));
    }
    interp::write_output(paths[k], host);
  }
  return paths;
}

} // namespace

codegen::SubgroupRows subgroup_rows_on(const target::DeviceProfile& profile) {
  return codegen::subgroup_rows_for(profile.limits());
}

bool interior_tiles_on(const target::DeviceProfile& profile) {
  return profile.type == target::DeviceType::gpu;
}

std::string describe_mismatches(const Verification& v) {
  return fmt::format("{} of {} elements differ; first: {}", v.mismatches, v.elements,
                     v.first_mismatch);
}

std::vector<interp::HostArray> draw_inputs(const ir::Program& program, const Sizes& sizes,
                                           uint64_t seed, bool interpreted) {
  // Inputs drawn exactly as `liftx eval` draws them, so a failure reproduces there; refused
  // before they are allocated when the run would not fit in host memory.
  interp::check_host_memory(program, sizes, interpreted);
  std::mt19937_64 rng(seed);
  std::vector<interp::HostArray> inputs;
  for (const ir::Expr& p : program.params)
    inputs.push_back(interp::random_input(p.type(), sizes, rng));
  return inputs;
}

std::optional<ShortCheck> short_check(const ir::Program& program, const ir::Program& reference,
                                      int64_t launches, int64_t steps_per_launch) {
  const std::optional<ir::HostIteration> run = ir::host_iteration(program);
  const std::optional<ir::HostIteration> ref = ir::host_iteration(reference);
  if (launches <= 0 || !run || !ref || ref->tail || run->count <= launches ||
      run->input != ref->input)
    return std::nullopt;
  // The step kernel computes `per_launch` steps a launch; the remainder launches what is left.
  int64_t per_launch = steps_per_launch;
  if (per_launch <= 0) {
    if (run->tail || ref->count % run->count != 0)
      return std::nullopt;
    per_launch = ref->count / run->count;
  }
  const int64_t remainder = ref->count - run->count * per_launch;
  if (remainder < 0 || (remainder > 0) != run->tail.has_value())
    return std::nullopt;
  const int64_t steps_checked = launches * per_launch + remainder;
  ShortCheck c{run->tail
                   ? ir::iterate_steps(run->step, launches, *run->tail, run->tail_count, run->input)
                   : ir::iterate_step(run->step, launches, run->input),
               ir::iterate_step(ref->step, steps_checked, ref->input), ref->count, steps_checked};
  c.program.name = program.name;
  c.reference.name = reference.name;
  return c;
}

std::string describe_check(const Verification& v) {
  std::vector<std::string> parts;
  if (v.steps > 0)
    parts.push_back(fmt::format("checked on {} of {} steps{}", v.steps_checked, v.steps,
                                v.passed && v.reference_ill_conditioned
                                    ? " (over every step the reference is ill-conditioned)"
                                    : ""));
  if (!v.checked_sizes.empty()) {
    std::vector<std::string> sizes;
    for (const auto& [name, value] : v.checked_sizes)
      sizes.push_back(fmt::format("{}={}", name, value));
    parts.push_back(fmt::format("checked at {}", fmt::join(sizes, " ")));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

namespace {

/// `inputs` with every float and double element moved by one ulp, up or down (a fixed
/// pseudo-random choice per element); other inputs as they are.
std::vector<interp::HostArray> one_ulp_away(std::vector<interp::HostArray> inputs, uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  for (interp::HostArray& input : inputs)
    for (double& x : input.data) {
      const bool up = (rng() & 1) != 0;
      if (input.kind == ir::ScalarKind::Float)
        x = std::nextafter(static_cast<float>(x), up ? HUGE_VALF : -HUGE_VALF);
      else if (input.kind == ir::ScalarKind::Double)
        x = std::nextafter(x, up ? HUGE_VAL : -HUGE_VAL);
    }
  return inputs;
}

/// Whether the check's reference is ill-conditioned at these sizes: its result moves beyond
/// `tolerance` when its inputs move by one ulp. A scheme that amplifies rounding (an unstable
/// iteration) moves that far under any kernel's own rounding too, so no kernel can be told right
/// or wrong against it. Asked only after a check fails; the answer is cached with the reference.
/// An empty string: well conditioned; else a sentence saying how far the result moved.
std::string reference_moves_by_one_ulp(const ir::Program& reference,
                                       const std::vector<interp::HostArray>& inputs,
                                       const interp::HostArray& result, const Sizes& sizes,
                                       uint64_t seed, double tolerance) {
  const std::filesystem::path file =
      runtime::default_cache_dir() / "references" /
      (runtime::content_hash(reference_cache_key(reference, sizes, seed) +
                             fmt::format(" tolerance={:a} floor=output", tolerance)) +
       ".conditioning");
  if (std::optional<std::string> cached = runtime::read_file_bytes(file))
    return *cached;
  interp::HostArray moved;
  try {
    moved = interp::evaluate(reference, one_ulp_away(inputs, seed), sizes);
  } catch (const std::exception&) {
    return ""; // (out of host memory, say) the mismatch is reported as it is, not cached
  }
  const Tolerance within{tolerance, output_floor(result.data.data(), result.data.size(), 1)};
  const ElementCheck check = check_elements(moved.kind, to_bytes(moved, moved.kind).data(), 0,
                                            moved.data.size(), result.data.data(), 1, within);
  std::string verdict;
  if (check.mismatches > 0)
    verdict = fmt::format(
        "the reference itself is ill-conditioned here: its inputs moved by one ulp move {} of {} "
        "of its elements beyond the tolerance (up to {:.3g} apart), so it amplifies rounding and "
        "no kernel that rounds differently can be checked against it; check fewer steps or with a "
        "larger --tolerance",
        check.mismatches, moved.data.size(), check.max_abs_error);
  runtime::write_file_atomically(file, verdict); // a failed write only loses the cache entry
  return verdict;
}

} // namespace

RunReport run_program(runtime::Device& device, const ir::Program& program, const Sizes& sizes,
                      const RunOptions& options) {
  // A check at sizes that the kernel's tiles do not divide could not run, and one with no tile
  // inside the grid would not run the copy of the code interior tiles take
  // (codegen::Options::interior_tiles): the sizes are doubled (each up to the run's) until they
  // do; at the run's sizes, the check is the run's own.
  std::optional<codegen::PreparedLaunch> full;
  if (options.check && !options.check_sizes.empty() && options.check_sizes != sizes) {
    full = codegen::prepare_launch(program, sizes, request_on(device, options),
                                   device.profile.limits());
    if (!checks_the_run(full->kernel, program, options.check_sizes)) {
      RunOptions larger = options;
      larger.check_sizes = covering_check_sizes(full->kernel, program, options.check_sizes, sizes);
      if (larger.check_sizes == sizes)
        larger.check_sizes.clear();
      return run_program(device, program, sizes, larger);
    }
  }
  if (full) {
    // Checked at the smaller sizes under the same launch rule (the kernel's source does not
    // depend on the sizes; tied thread counts follow them, free ones stay as asked), then run at
    // the full sizes unchecked; a failed check is the report.
    const codegen::LaunchRequest same_rule = codegen::request_for(full->launch);
    RunOptions checking = options;
    checking.check_sizes.clear();
    checking.time = false;
    checking.output_file.clear();
    checking.inputs = nullptr; // drawn at the run's sizes
    checking.expected = nullptr;
    checking.uploaded = nullptr;
    checking.global = same_rule.global;
    checking.local = same_rule.local;
    RunReport checked = run_program(device, program, options.check_sizes, checking);
    checked.verification.checked_sizes = options.check_sizes;
    if (checked.status != runtime::Status::ok) {
      checked.message =
          fmt::format("{} ({})", checked.message, describe_check(checked.verification));
      return checked;
    }
    RunOptions timing = options;
    timing.check_sizes.clear();
    timing.check = false;
    RunReport report = run_program(device, program, sizes, timing);
    report.verification = checked.verification;
    return report;
  }
  if (options.check && options.check_launches > 0) {
    if (const std::optional<ShortCheck> shortened =
            short_check(program, options.reference ? *options.reference : program,
                        options.check_launches, options.steps_per_launch)) {
      // Checked shortened (the inputs are drawn the same way: the same parameters), then run in
      // full, unchecked; a failed check is the report.
      RunOptions checking = options;
      checking.check_launches = 0;
      checking.time = false;
      checking.output_file.clear();
      checking.reference = &shortened->reference;
      checking.expected = nullptr; // the full program's, if given
      RunReport checked = run_program(device, shortened->program, sizes, checking);
      checked.verification.steps_checked = shortened->steps_checked;
      checked.verification.steps = shortened->steps;
      if (checked.status != runtime::Status::ok) {
        checked.message =
            fmt::format("{} ({})", checked.message, describe_check(checked.verification));
        return checked;
      }
      RunOptions timing = options;
      timing.check_launches = 0;
      timing.check = false;
      RunReport report = run_program(device, program, sizes, timing);
      report.verification = checked.verification;
      return report;
    }
  }
  interp::check_sizes(program, sizes);
  // The program's own intermediates are allocated only where it is interpreted: checked against
  // itself. A lowered variant checked against a reference (or a given result) needs its buffers.
  const bool interpreted = options.check && !options.reference && !options.expected;
  interp::check_host_memory(program, sizes, interpreted);
  if (options.check && options.reference && !options.expected)
    interp::check_host_memory(*options.reference, sizes);
  RunReport report;
  report.program = program.name;
  report.device = device.profile.device_name;
  report.sizes = sizes;
  codegen::PreparedLaunch launch =
      codegen::prepare_launch(program, sizes, request_on(device, options), device.profile.limits());
  report.launch = launch.launch;
  report.local_bytes = launch.local_bytes;
  report.kernel_source = launch.kernel.source;
  report.launches = launch.kernel.total_launches();

  std::vector<interp::HostArray> drawn;
  if (!options.inputs)
    drawn = draw_inputs(program, sizes, options.seed, interpreted);
  const std::vector<interp::HostArray>& inputs = options.inputs ? *options.inputs : drawn;

  // Counted before any device work, so that a program the count cannot walk fails without
  // discarding a measurement.
  const double flops =
      options.time ? count_flops(options.reference ? *options.reference : program, sizes) : 0;
  try {
    BoundKernel bound = bind_kernel(device, launch, inputs, sizes, options.uploaded);
    report.build_ms = bound.build.build_ms;
    report.cache_hit = bound.build.cache_hit;
    report.compile_ms = bound.build.compile_ms;
    report.bytes_moved = bound.bytes_moved;
    auto [global, local] = ndranges(launch.launch);

    if (options.check) {
      interp::HostArray interpreted;
      if (!options.expected)
        interpreted = reference_result(program, options, inputs, sizes);
      double tolerance = std::max(options.tolerance, reordering_tolerance(program, sizes));
      if (options.reference)
        tolerance = std::max(tolerance, reordering_tolerance(*options.reference, sizes));
      report.verification =
          run_and_verify(device, bound, global, local,
                         options.expected ? *options.expected : interpreted, tolerance);
      if (!report.verification.passed) {
        report.status = runtime::Status::wrong_result;
        report.message = describe_mismatches(report.verification);
        const Verification& v = report.verification;
        if (!options.expected && v.unwritten == 0 && v.mismatches > 0 && v.elements > 0) {
          const std::string conditioning =
              reference_moves_by_one_ulp(options.reference ? *options.reference : program, inputs,
                                         interpreted, sizes, options.seed, tolerance);
          report.verification.reference_ill_conditioned = !conditioning.empty();
          if (!conditioning.empty())
            report.message += "; " + conditioning;
        }
        return report;
      }
    }
    if (!options.output_file.empty() && !options.check && !options.time)
      run_once(device, bound, global, local);
    if (options.time) {
      report.timing = time_runs(device, bound, global, local, options.warmup, options.repeat);
      report.gb_per_s = report.bytes_moved / (report.timing->median_ms * 1e6);
      if (options.roofline) {
        report.roofline_gb_per_s = runtime::measure_copy_roofline(device);
        report.roofline_fraction = *report.gb_per_s / *report.roofline_gb_per_s;
      }
      set_arithmetic_rate(report, flops, fp32_peak_gflop_per_s(device.profile));
    }
    if (!options.output_file.empty()) {
      std::vector<int64_t> shape = interp::concrete_shape(program.result_type(), sizes);
      if (bound.outputs.size() > 1)
        shape.pop_back(); // one file per component
      report.output_files = write_outputs(device, bound, shape, options.output_file);
    }
  } catch (const runtime::BuildError& e) {
    report.status = runtime::Status::build_error;
    report.message = e.what();
  } catch (const runtime::LaunchError& e) {
    report.status = e.status();
    report.message = e.what();
  }
  return report;
}

std::optional<double> fp32_peak_gflop_per_s(const target::DeviceProfile& device) {
  if (device.compute_units == 0 || device.max_clock_mhz == 0)
    return std::nullopt; // throughput() would assume them: no estimate to show as a peak
  return device.throughput().gops * 2; // gops counts an FMA as one operation
}

void set_arithmetic_rate(RunReport& report, double flops, std::optional<double> peak_gflop_per_s) {
  report.flops = flops;
  if (flops <= 0 || !report.timing || report.timing->median_ms <= 0)
    return;
  report.gflop_per_s = flops / (report.timing->median_ms * 1e6);
  if (peak_gflop_per_s && *peak_gflop_per_s > 0) {
    report.fp32_peak_gflop_per_s = peak_gflop_per_s;
    report.fp32_peak_fraction = *report.gflop_per_s / *peak_gflop_per_s;
  }
}

nlohmann::json to_json(const RunReport& r) {
  nlohmann::json j;
  j["status"] = std::string(runtime::to_string(r.status));
  j["message"] = r.message;
  j["program"] = r.program;
  j["device"] = r.device;
  j["sizes"] = r.sizes;
  const codegen::Launch& l = r.launch;
  j["dims"] = l.dims;
  j["global"] = std::vector<int64_t>(l.global.begin(), l.global.begin() + l.dims);
  j["local"] = std::vector<int64_t>(l.local.begin(), l.local.begin() + l.dims);
  j["threads_tied"] = l.tied;
  j["local_bytes"] = r.local_bytes;
  j["build_ms"] = r.build_ms;
  j["cache_hit"] = r.cache_hit;
  j["compile_ms"] = r.compile_ms;
  j["bytes_moved"] = r.bytes_moved;
  j["launches"] = r.launches;
  if (r.timing) {
    j["time_ms"] = {{"median", r.timing->median_ms}, {"min", r.timing->min_ms},
                    {"max", r.timing->max_ms},       {"q1", r.timing->q1_ms},
                    {"q3", r.timing->q3_ms},         {"samples", r.timing->samples_ms}};
  }
  if (r.gb_per_s)
    j["gb_per_s"] = *r.gb_per_s;
  if (r.roofline_gb_per_s)
    j["roofline_gb_per_s"] = *r.roofline_gb_per_s;
  if (r.roofline_fraction)
    j["roofline_fraction"] = *r.roofline_fraction;
  j["flops"] = r.flops;
  if (r.gflop_per_s)
    j["gflop_per_s"] = *r.gflop_per_s;
  if (r.fp32_peak_gflop_per_s)
    j["fp32_peak_gflop_per_s"] = *r.fp32_peak_gflop_per_s;
  if (r.fp32_peak_fraction)
    j["fp32_peak_fraction"] = *r.fp32_peak_fraction;
  const Verification& v = r.verification;
  j["verification"] = {{"checked", v.checked},
                       {"passed", v.passed},
                       {"elements", v.elements},
                       {"mismatches", v.mismatches},
                       {"unwritten", v.unwritten},
                       {"max_abs_error", v.max_abs_error},
                       {"first_mismatch", v.first_mismatch},
                       {"steps_checked", v.steps_checked},
                       {"steps", v.steps},
                       {"reference_ill_conditioned", v.reference_ill_conditioned}};
  if (!v.checked_sizes.empty())
    j["verification"]["checked_sizes"] = v.checked_sizes;
  if (!r.output_files.empty())
    j["output_files"] = r.output_files;
  return j;
}

RunReport report_from_json(const nlohmann::json& j) {
  RunReport r;
  r.status =
      runtime::parse_status(j.at("status").get<std::string>()).value_or(runtime::Status::run_error);
  r.message = j.value("message", "");
  r.program = j.value("program", "");
  r.device = j.value("device", "");
  r.sizes = j.value("sizes", Sizes{});
  r.launch.dims = j.value("dims", 1);
  auto global = j.value("global", std::vector<int64_t>{});
  auto local = j.value("local", std::vector<int64_t>{});
  for (size_t d = 0; d < global.size() && d < 3; ++d)
    r.launch.global[d] = global[d];
  for (size_t d = 0; d < local.size() && d < 3; ++d)
    r.launch.local[d] = local[d];
  r.launch.tied = j.value("threads_tied", true);
  r.local_bytes = j.value("local_bytes", int64_t{0});
  r.build_ms = j.value("build_ms", 0.0);
  r.cache_hit = j.value("cache_hit", false);
  r.compile_ms = j.value("compile_ms", 0.0);
  r.bytes_moved = j.value("bytes_moved", 0.0);
  r.launches = j.value("launches", int64_t{1});
  if (j.contains("time_ms")) {
    const auto& t = j["time_ms"];
    runtime::Timing timing;
    timing.median_ms = t.value("median", 0.0);
    timing.min_ms = t.value("min", 0.0);
    timing.max_ms = t.value("max", 0.0);
    timing.q1_ms = t.value("q1", 0.0);
    timing.q3_ms = t.value("q3", 0.0);
    timing.samples_ms = t.value("samples", std::vector<double>{});
    r.timing = timing;
  }
  if (j.contains("gb_per_s"))
    r.gb_per_s = j["gb_per_s"].get<double>();
  if (j.contains("roofline_gb_per_s"))
    r.roofline_gb_per_s = j["roofline_gb_per_s"].get<double>();
  if (j.contains("roofline_fraction"))
    r.roofline_fraction = j["roofline_fraction"].get<double>();
  r.flops = j.value("flops", 0.0);
  if (j.contains("gflop_per_s"))
    r.gflop_per_s = j["gflop_per_s"].get<double>();
  if (j.contains("fp32_peak_gflop_per_s"))
    r.fp32_peak_gflop_per_s = j["fp32_peak_gflop_per_s"].get<double>();
  if (j.contains("fp32_peak_fraction"))
    r.fp32_peak_fraction = j["fp32_peak_fraction"].get<double>();
  if (j.contains("verification")) {
    const auto& v = j["verification"];
    r.verification.checked = v.value("checked", false);
    r.verification.passed = v.value("passed", false);
    r.verification.elements = v.value("elements", int64_t{0});
    r.verification.mismatches = v.value("mismatches", int64_t{0});
    r.verification.unwritten = v.value("unwritten", int64_t{0});
    r.verification.max_abs_error = v.value("max_abs_error", 0.0);
    r.verification.first_mismatch = v.value("first_mismatch", "");
    r.verification.steps_checked = v.value("steps_checked", int64_t{0});
    r.verification.steps = v.value("steps", int64_t{0});
    r.verification.checked_sizes = v.value("checked_sizes", Sizes{});
    r.verification.reference_ill_conditioned = v.value("reference_ill_conditioned", false);
  }
  r.output_files = j.value("output_files", std::vector<std::string>{});
  return r;
}

} // namespace liftx::exec

namespace liftx::exec {

int32_t DynamicCounts::count(int64_t work_item, int slot) const {
  return counts.at(static_cast<size_t>(work_item * kernel.instrumentation->slots() + slot));
}

DynamicCounts run_instrumented(runtime::Device& device, const ir::Program& program,
                               const Sizes& sizes, const RunOptions& options) {
  interp::check_sizes(program, sizes);
  RunOptions instrumented = options;
  instrumented.instrument = true;
  codegen::PreparedLaunch launch = codegen::prepare_launch(
      program, sizes, request_on(device, instrumented), device.profile.limits());
  std::vector<interp::HostArray> inputs = draw_inputs(program, sizes, options.seed);
  DynamicCounts counts;
  counts.launch = launch.launch;
  counts.work_items = launch.launch.work_items();
  try {
    BoundKernel bound = bind_kernel(device, launch, inputs, sizes);
    auto [global, local] = ndranges(launch.launch);
    Verification v =
        run_and_verify(device, bound, global, local, interp::evaluate(program, inputs, sizes),
                       std::max(options.tolerance, reordering_tolerance(program, sizes)));
    LIFTX_INTERNAL_CHECK(v.passed, "the instrumented kernel of {} computes a wrong result: {}",
                         program.name, v.first_mismatch);
    const codegen::Instrumentation& inst = *launch.kernel.instrumentation;
    auto read_ints = [&](const cl::Buffer& buffer, size_t per_item) {
      std::vector<int32_t> values(static_cast<size_t>(counts.work_items) * per_item + 1);
      runtime::check_cl(device.queue.enqueueReadBuffer(
                            buffer, CL_TRUE, 0, values.size() * sizeof(int32_t), values.data()),
                        "reading the counters");
      values.pop_back();
      return values;
    };
    counts.counts = read_ints(bound.counts, static_cast<size_t>(inst.slots()));
    counts.first_index = read_ints(bound.first_index, static_cast<size_t>(inst.access_slots));
  } catch (const runtime::BuildError& e) {
    LIFTX_UNREACHABLE("the instrumented kernel does not build: {}", e.what());
  }
  counts.kernel = std::move(launch.kernel);
  return counts;
}

} // namespace liftx::exec

namespace liftx::exec {

double reordering_tolerance(const ir::Program& program, const Sizes& sizes) {
  int64_t longest = 0;
  std::function<void(const ir::Expr&)> on_expr;
  std::function<void(const ir::Fun&)> on_fun = [&](const ir::Fun& f) {
    ir::for_each_child(f, on_fun, on_expr);
  };
  on_expr = [&](const ir::Expr& e) {
    if (const auto* call = e.as<ir::Call>();
        call && call->args.size() == 1 &&
        (call->fun.as<ir::Reduce>() || call->fun.as<ir::ReduceSeq>()))
      if (const auto* array = call->args[0].type().as<ir::ArrayType>()) {
        try {
          longest = std::max(longest, arith::evaluate(array->length, sizes));
        } catch (const UserError&) {
          // a length over variables these sizes do not bind: not this program's reduction
        }
      }
    ir::for_each_child(e, on_fun, on_expr);
  };
  on_expr(program.body);
  return 8.0 * static_cast<double>(longest) * std::ldexp(1.0, -24);
}

std::string reference_cache_key(const ir::Program& reference, const Sizes& sizes, uint64_t seed) {
  // The printed program names its user functions but not their bodies: each definition is
  // printed in full, so that two programs differing only inside one never share a result.
  std::string key =
      fmt::format("inputs v{}\n{}\n", interp::kRandomInputVersion, ir::print(reference));
  std::vector<ir::UserFunPtr> userfuns;
  ir::collect_userfuns(reference.body, userfuns);
  for (const ir::UserFunPtr& f : userfuns)
    key += f->to_opencl() + "\n";
  for (const auto& [name, value] : sizes)
    key += fmt::format("{}={} ", name, value);
  key += fmt::format("seed={}", seed);
  return key;
}

interp::HostArray reference_result(const ir::Program& program, const RunOptions& options,
                                   const std::vector<interp::HostArray>& inputs,
                                   const Sizes& sizes) {
  if (!options.reference)
    return interp::evaluate(program, inputs, sizes);
  const ir::Program& reference = *options.reference;
  bool same_signature = reference.params.size() == program.params.size() &&
                        reference.result_type() == program.result_type();
  for (size_t i = 0; same_signature && i < program.params.size(); ++i)
    same_signature = reference.params[i].type() == program.params[i].type();
  LIFTX_USER_CHECK(same_signature,
                   "the reference {} does not have the parameter and result types of {}",
                   reference.name, program.name);
  std::filesystem::path file =
      runtime::default_cache_dir() / "references" /
      (runtime::content_hash(reference_cache_key(reference, sizes, options.seed)) + ".f32");
  std::vector<int64_t> shape = interp::concrete_shape(reference.result_type(), sizes);
  int64_t elements = 1;
  for (int64_t d : shape)
    elements *= d;
  const bool cacheable = ir::array_base(reference.result_type()) == ir::Type::float_();
  if (cacheable) {
    if (std::optional<std::string> bytes = runtime::read_file_bytes(file);
        bytes && bytes->size() == static_cast<size_t>(elements) * 4) {
      interp::HostArray cached;
      cached.kind = ir::ScalarKind::Float;
      cached.shape = shape;
      cached.data.resize(static_cast<size_t>(elements));
      for (size_t i = 0; i < cached.data.size(); ++i) {
        float v;
        std::memcpy(&v, bytes->data() + i * 4, 4);
        cached.data[i] = v;
      }
      return cached;
    }
  }
  interp::HostArray result = interp::evaluate(reference, inputs, sizes);
  if (cacheable) { // a failed write only loses the cache entry
    const std::vector<unsigned char> bytes = to_bytes(result, ir::ScalarKind::Float);
    runtime::write_file_atomically(
        file, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }
  return result;
}

} // namespace liftx::exec

namespace liftx::exec {

void UploadedInputs::check_same(const std::vector<interp::HostArray>& inputs) {
  LIFTX_INTERNAL_CHECK(!inputs_ || inputs_ == &inputs,
                       "UploadedInputs reused for a different set of inputs");
  inputs_ = &inputs;
}

cl::Buffer UploadedInputs::group_buffer(runtime::Device& device,
                                        const std::vector<interp::HostArray>& inputs,
                                        const ir::StorageGroup& group, ir::ScalarKind kind) {
  check_same(inputs);
  std::string key = ir::layout_text(group);
  for (size_t f : group.fields)
    key += fmt::format(",{}", f);
  auto it = group_buffers_.find({key, kind});
  if (it == group_buffers_.end())
    it = group_buffers_
             .emplace(std::make_pair(key, kind), upload_group(device, inputs, group, kind, key))
             .first;
  return it->second;
}

cl::Buffer UploadedInputs::buffer(runtime::Device& device,
                                  const std::vector<interp::HostArray>& inputs, size_t index,
                                  ir::ScalarKind kind) {
  check_same(inputs);
  auto key = std::make_pair(index, kind);
  auto it = buffers_.find(key);
  if (it == buffers_.end())
    it = buffers_.emplace(key, upload(device, inputs.at(index), kind, fmt::format("{}", index)))
             .first;
  return it->second;
}

} // namespace liftx::exec
