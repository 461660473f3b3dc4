// Kernels: building and binding a lowered program, and running it on the application's data.
#include "codegen/kernel.hpp"
#include "api/internal.hpp"
#include "ir/storage.hpp"
#include "runtime/build_cache.hpp"
#include "runtime/launch.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

namespace liftx {

namespace {

size_t element_bytes(ScalarKind kind) {
  if (kind == ScalarKind::Bool)
    throw NotImplemented("bool arrays as device buffers");
  return codegen::scalar_bytes(kind);
}

int64_t evaluate_size(const arith::Expr& e, const Sizes& sizes) {
  return arith::evaluate(e, sizes);
}

void set_arg(cl::Kernel& kernel, int index, const cl::Buffer& buffer, const std::string& what) {
  runtime::check_cl(kernel.setArg(static_cast<cl_uint>(index), buffer),
                    fmt::format("setting kernel argument {} ({})", index, what));
}

std::string shape_text(const ArrayInfo& a) {
  std::string dims;
  for (int64_t d : a.shape)
    dims += (dims.empty() ? "" : "x") + std::to_string(d);
  return dims.empty() ? std::string("a scalar") : dims;
}

} // namespace

void KernelFactory::check_input(const std::shared_ptr<Context::Impl>& context, const ArrayInfo& p,
                                const Input& in, const std::string& which) {
  if (!in.device_.empty()) {
    const Buffer::Impl& b = *in.device_.impl_;
    LIFTX_USER_CHECK(b.context == context, "{} is a Buffer of another Context", which);
    LIFTX_USER_CHECK(b.kind == p.kind && b.elements == p.elements,
                     "{} needs {} {} elements ({}), got a Buffer of {} {} elements", which,
                     p.elements, to_string(p.kind), shape_text(p), b.elements, to_string(b.kind));
    return;
  }
  LIFTX_USER_CHECK(in.kind_ == p.kind && in.count_ == p.elements,
                   "{} needs {} {} elements ({}), got {} {} elements", which, p.elements,
                   to_string(p.kind), shape_text(p), in.count_, to_string(in.kind_));
}

const cl::Buffer& KernelFactory::bind_input(Kernel::Impl& k, size_t index, const Input& in) {
  const ArrayInfo& p = k.params[index];
  const std::string which = fmt::format("input {} ({}) of {}", index, p.name, k.program_name);
  check_input(k.context, p, in, which);
  if (!in.device_.empty())
    return in.device_.impl_->buffer;
  cl::Buffer& staging = k.staging[index];
  const size_t bytes = p.elements * element_bytes(p.kind);
  if (staging() == nullptr)
    staging = runtime::allocate(k.context->device, std::max<size_t>(bytes, 4));
  if (bytes > 0) // blocking: the application may free its data as soon as run() returns or throws
    runtime::check_cl(
        k.context->device.queue.enqueueWriteBuffer(staging, CL_TRUE, 0, bytes, in.host_),
        fmt::format("uploading {}", which));
  return staging;
}

cl_mem KernelFactory::bind_group(Kernel::Impl& k, Kernel::Impl::StoredGroup& g,
                                 const std::vector<Input>& inputs) {
  std::vector<const unsigned char*> fields;
  for (size_t f : g.group.fields) {
    const ArrayInfo& p = k.params[f];
    const std::string which = fmt::format("input {} ({}) of {}", f, p.name, k.program_name);
    check_input(k.context, p, inputs[f], which);
    LIFTX_USER_CHECK(inputs[f].device_.empty(),
                     "{} is a Buffer, but the kernel reads it from one {} buffer with {} other "
                     "grid(s): pass its data from the host (it is packed before every run)",
                     which, ir::layout_text(g.group), g.group.fields.size() - 1);
    fields.push_back(static_cast<const unsigned char*>(inputs[f].host_));
  }
  const ArrayInfo& first = k.params[g.group.fields.front()];
  const std::vector<unsigned char> packed =
      ir::pack_grids(g.group, fields, first.shape, element_bytes(first.kind));
  if (g.staging() == nullptr)
    g.staging = runtime::allocate(k.context->device, std::max<size_t>(packed.size(), 4));
  if (!packed.empty()) // blocking, as bind_input
    runtime::check_cl(
        k.context->device.queue.enqueueWriteBuffer(g.staging, CL_TRUE, 0, packed.size(),
                                                   packed.data()),
        fmt::format("uploading the {} grids of {}", ir::layout_text(g.group), k.program_name));
  set_arg(k.kernel, g.arg, g.staging, first.name);
  return g.staging();
}

Kernel KernelFactory::make(const std::shared_ptr<Context::Impl>& context, const Program& lowered,
                           const Sizes& sizes, const exec::RunOptions& launch_options,
                           std::string program_name, std::string variant) {
  auto k = std::make_shared<Kernel::Impl>();
  k->context = context;
  k->program_name = std::move(program_name);
  k->sizes = sizes;
  k->lowered = print_program(lowered);
  k->params = parameter_arrays(lowered, sizes);
  k->results = result_arrays(lowered, sizes);
  k->launch = codegen::prepare_launch(lowered, sizes, launch_options.request(),
                                      context->device.profile.limits());
  k->variant = fmt::format("{} | {}", variant, codegen::describe(k->launch.launch));
  auto build = [&](const codegen::Kernel& generated) {
    runtime::BuildResult built;
    try {
      built = runtime::default_build_cache().build(context->device, generated.source);
    } catch (const runtime::BuildError& e) {
      throw kernel_error(runtime::Status::build_error,
                         fmt::format("the kernel of {} does not build on {}: {}", k->program_name,
                                     context->info.name, e.what()));
    }
    cl_int err = CL_SUCCESS;
    cl::Kernel kernel(built.program, generated.name.c_str(), &err);
    runtime::check_cl(err, "creating the kernel");
    return kernel;
  };
  k->kernel = build(k->launch.kernel);
  std::tie(k->global, k->local) = exec::ndranges(k->launch.launch);
  k->staging.resize(k->params.size());
  // Arguments that stay the same for every run are set once: sizes, local memory, temporaries.
  auto set_fixed_args = [&](const codegen::Kernel& generated, cl::Kernel& kernel,
                            std::vector<int>& param_args, std::vector<int>& result_args) {
    param_args.assign(k->params.size(), -1);
    for (size_t i = 0; i < generated.args.size(); ++i) {
      const codegen::KernelArg& a = generated.args[i];
      const auto index = static_cast<cl_uint>(i);
      switch (a.role) {
      case codegen::KernelArg::Role::Input:
        if (a.storage) {
          if (&generated != &k->launch.kernel)
            throw NotImplemented(fmt::format("a host iteration's tail kernel reading grids "
                                             "stored in a {} layout group",
                                             ir::layout_text(*a.storage)));
          k->groups.push_back({*a.storage, static_cast<int>(i), {}});
          break;
        }
        LIFTX_INTERNAL_CHECK(a.input_index >= 0 && size_t(a.input_index) < k->params.size(),
                             "kernel input {} has no parameter", a.name);
        param_args[size_t(a.input_index)] = static_cast<int>(i);
        LIFTX_INTERNAL_CHECK(a.kind == k->params[size_t(a.input_index)].kind,
                             "kernel input {} is {}, its parameter {}", a.name, to_string(a.kind),
                             to_string(k->params[size_t(a.input_index)].kind));
        break;
      case codegen::KernelArg::Role::Output: {
        const auto component = static_cast<size_t>(a.output_index);
        LIFTX_INTERNAL_CHECK(a.output_index >= 0 && component == result_args.size() &&
                                 component < k->results.size(),
                             "kernel output {} (component {}) is out of order or beyond the {} "
                             "outputs of the result",
                             a.name, a.output_index, k->results.size());
        const ArrayInfo& r = k->results[component];
        LIFTX_INTERNAL_CHECK(a.kind == r.kind, "kernel output {} is {}, {} {}", a.name,
                             to_string(a.kind), r.name, to_string(r.kind));
        LIFTX_INTERNAL_CHECK(static_cast<size_t>(evaluate_size(a.elements, sizes)) == r.elements,
                             "kernel output {} has {} elements, {} {}", a.name,
                             evaluate_size(a.elements, sizes), r.name, r.elements);
        result_args.push_back(static_cast<int>(i));
        break;
      }
      case codegen::KernelArg::Role::Temporary: {
        const auto bytes =
            static_cast<size_t>(evaluate_size(a.elements, sizes)) * element_bytes(a.kind);
        k->temporaries.push_back(runtime::allocate(context->device, std::max<size_t>(bytes, 4)));
        set_arg(kernel, static_cast<int>(i), k->temporaries.back(), a.name);
        break;
      }
      case codegen::KernelArg::Role::Local: {
        const auto bytes =
            static_cast<size_t>(evaluate_size(a.elements, sizes)) * element_bytes(a.kind);
        runtime::check_cl(kernel.setArg(index, cl::Local(std::max<size_t>(bytes, 4))),
                          fmt::format("setting local memory {}", a.name));
        break;
      }
      case codegen::KernelArg::Role::Size:
        runtime::check_cl(kernel.setArg(index, static_cast<int32_t>(sizes.at(a.name))),
                          fmt::format("setting size {}", a.name));
        break;
      case codegen::KernelArg::Role::Counters:
      case codegen::KernelArg::Role::FirstIndex:
        LIFTX_UNREACHABLE("instrumented kernel in the API");
      }
    }
  };
  set_fixed_args(k->launch.kernel, k->kernel, k->param_args, k->result_args);
  if (const std::shared_ptr<const codegen::Kernel>& tail = k->launch.kernel.tail) {
    Kernel::Impl::Tail& t = k->tail.emplace();
    t.kernel = build(*tail);
    std::tie(t.global, t.local) = exec::ndranges(*k->launch.tail);
    set_fixed_args(*tail, t.kernel, t.param_args, t.result_args);
  }
  LIFTX_INTERNAL_CHECK(k->result_args.size() == k->results.size(),
                       "the kernel of {} has {} outputs, its result {} components", k->program_name,
                       k->result_args.size(), k->results.size());
  k->result_staging.resize(k->results.size());
  ++context->stats.compiles;
  Kernel kernel;
  kernel.impl_ = std::move(k);
  return kernel;
}

RunStats KernelFactory::run_locked(const Kernel& kernel, const std::vector<Input>& inputs,
                                   const std::vector<Output>& outputs) {
  LIFTX_USER_CHECK(kernel.impl_, "run of an empty Kernel (compile or tune one first)");
  Kernel::Impl& k = *kernel.impl_;
  const auto start = std::chrono::steady_clock::now();
  if (inputs.size() != k.params.size()) {
    std::string names;
    for (const ArrayInfo& p : k.params)
      names += (names.empty() ? "" : ", ") + p.name;
    throw UserError(fmt::format("{} takes {} input{} ({}), got {}", k.program_name, k.params.size(),
                                k.params.size() == 1 ? "" : "s", names, inputs.size()));
  }
  const size_t count = k.results.size();
  LIFTX_USER_CHECK(outputs.size() == count, "{} has {} output{}{}, got {}", k.program_name, count,
                   count == 1 ? "" : "s", count == 1 ? "" : " (one per tuple component)",
                   outputs.size());
  auto which_output = [&](size_t c) {
    return count == 1 ? fmt::format("the output of {}", k.program_name)
                      : fmt::format("output {} ({}) of {}", c, k.results[c].name, k.program_name);
  };
  std::vector<cl_mem> bound;
  const cl::Buffer* iterated_input = nullptr;
  try {
    for (Kernel::Impl::StoredGroup& g : k.groups)
      bound.push_back(bind_group(k, g, inputs));
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Input& in = inputs[i];
      if (k.param_args[i] < 0 && std::any_of(k.groups.begin(), k.groups.end(), [&](const auto& g) {
            return std::find(g.group.fields.begin(), g.group.fields.end(), i) !=
                   g.group.fields.end();
          }))
        continue; // read through its group's buffer
      const cl::Buffer& b = bind_input(k, i, in);
      if (static_cast<int>(i) == k.launch.kernel.iterated_input)
        iterated_input = &b;
      bound.push_back(b());
      if (k.param_args[i] >= 0)
        set_arg(k.kernel, k.param_args[i], b, k.params[i].name);
      if (k.tail && k.tail->param_args[i] >= 0)
        set_arg(k.tail->kernel, k.tail->param_args[i], b, k.params[i].name);
    }
    // Every output is checked before anything runs.
    std::vector<const cl::Buffer*> targets(count, nullptr);
    for (size_t c = 0; c < count; ++c) {
      const Output& output = outputs[c];
      const ArrayInfo& r = k.results[c];
      const std::string which = which_output(c);
      if (!output.device_.empty()) {
        const Buffer::Impl& b = *output.device_.impl_;
        LIFTX_USER_CHECK(b.context == k.context, "{} is a Buffer of another Context", which);
        LIFTX_USER_CHECK(b.kind == r.kind && b.elements == r.elements,
                         "{} needs {} {} elements ({}), got a Buffer of {} {} elements", which,
                         r.elements, to_string(r.kind), shape_text(r), b.elements,
                         to_string(b.kind));
        LIFTX_USER_CHECK(std::find(bound.begin(), bound.end(), b.buffer()) == bound.end(),
                         "{} is also one of its inputs: a stencil reads neighbours the kernel "
                         "may already have overwritten; use two buffers and swap them",
                         which);
        for (size_t e = 0; e < c; ++e)
          LIFTX_USER_CHECK(
              outputs[e].device_.empty() || outputs[e].device_.impl_->buffer() != b.buffer(),
              "{} is the same Buffer as output {}: each output needs its own", which, e);
        targets[c] = &b.buffer;
        continue;
      }
      if (output.vector_ == nullptr)
        LIFTX_USER_CHECK(output.kind_ == r.kind && output.count_ == r.elements,
                         "{} needs {} {} elements ({}), got room for {} {} elements", which,
                         r.elements, to_string(r.kind), shape_text(r), output.count_,
                         to_string(output.kind_));
      else
        LIFTX_USER_CHECK(output.kind_ == r.kind, "{} has {} elements, got a vector of {}", which,
                         to_string(r.kind), to_string(output.kind_));
      for (size_t e = 0; e < c; ++e) {
        const Output& other = outputs[e];
        const bool same = output.vector_ ? other.vector_ == output.vector_
                                         : other.host_ != nullptr && other.host_ == output.host_;
        LIFTX_USER_CHECK(!same, "{} is the same host array as output {}: each output needs its own",
                         which, e);
      }
      cl::Buffer& staging = k.result_staging[c];
      if (staging() == nullptr)
        staging = runtime::allocate(k.context->device,
                                    std::max<size_t>(r.elements * element_bytes(r.kind), 4));
      targets[c] = &staging;
    }
    for (size_t c = 0; c < count; ++c)
      set_arg(k.kernel, k.result_args[c], *targets[c],
              count == 1 ? std::string("output") : fmt::format("output {}", c));
    RunStats stats;
    const int64_t launches = k.launch.kernel.total_launches();
    if (launches == 1) {
      stats.kernel_ms = runtime::run_kernel(k.context->device, k.kernel, k.global, k.local);
    } else {
      // An iterated program: launch j reads what launch j - 1 wrote; the launches alternate
      // between the output and a buffer of the kernel's own so that the last writes the output
      // (the inputs stay untouched). A tail's launches follow the kernel's on the same buffers.
      LIFTX_INTERNAL_CHECK(count == 1 && iterated_input, "an iterated kernel with {} outputs",
                           count);
      if (k.iteration_buffer() == nullptr)
        k.iteration_buffer = runtime::allocate(
            k.context->device,
            std::max<size_t>(k.results[0].elements * element_bytes(k.results[0].kind), 4));
      auto destination = [&](int64_t j) -> const cl::Buffer& {
        return codegen::launch_writes_output(j, launches) ? *targets[0] : k.iteration_buffer;
      };
      const size_t iterated = size_t(k.launch.kernel.iterated_input);
      std::vector<runtime::LaunchStage> stages{
          {&k.kernel, k.global, k.local, k.launch.kernel.launches}};
      if (k.tail)
        stages.push_back(
            {&k.tail->kernel, k.tail->global, k.tail->local, k.launch.kernel.tail->launches});
      stats.kernel_ms = runtime::run_launch_stages(k.context->device, stages, [&](int64_t j) {
        const bool head = j < k.launch.kernel.launches;
        cl::Kernel& launched = head ? k.kernel : k.tail->kernel;
        set_arg(launched, head ? k.param_args[iterated] : k.tail->param_args[iterated],
                j == 0 ? *iterated_input : destination(j - 1), k.params[iterated].name);
        set_arg(launched, head ? k.result_args[0] : k.tail->result_args[0], destination(j),
                "output");
      });
    }
    ++k.context->stats.runs;
    for (size_t c = 0; c < count; ++c) {
      const Output& output = outputs[c];
      const ArrayInfo& r = k.results[c];
      const size_t bytes = r.elements * element_bytes(r.kind);
      if (output.device_.empty() && bytes > 0) {
        void* host = output.vector_ ? output.resize_(output.vector_, r.elements) : output.host_;
        runtime::check_cl(
            k.context->device.queue.enqueueReadBuffer(*targets[c], CL_TRUE, 0, bytes, host),
            fmt::format("reading {}", which_output(c)));
      } else if (output.vector_) {
        output.resize_(output.vector_, r.elements);
      }
    }
    stats.total_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return stats;
  } catch (const runtime::LaunchError& e) {
    throw kernel_error(e.status(), fmt::format("running {} ({}) on {}: {}", k.program_name,
                                               k.variant, k.context->info.name, e.what()));
  }
}

RunStats Kernel::run(const std::vector<Input>& inputs, const Output& output) const {
  LIFTX_USER_CHECK(impl_, "run of an empty Kernel (compile or tune one first)");
  LIFTX_USER_CHECK(impl_->results.size() == 1,
                   "{} has {} outputs (one per tuple component): pass a vector of Outputs, one "
                   "per component, in order",
                   impl_->program_name, impl_->results.size());
  std::lock_guard lock(impl_->context->mutex);
  return KernelFactory::run_locked(*this, inputs, std::vector<Output>{output});
}

RunStats Kernel::run(const std::vector<Input>& inputs, const std::vector<Output>& outputs) const {
  LIFTX_USER_CHECK(impl_, "run of an empty Kernel (compile or tune one first)");
  std::lock_guard lock(impl_->context->mutex);
  return KernelFactory::run_locked(*this, inputs, outputs);
}

namespace {
const Kernel::Impl& checked(const std::shared_ptr<Kernel::Impl>& impl) {
  LIFTX_USER_CHECK(impl, "the Kernel is empty (compile or tune one first)");
  return *impl;
}
const ArrayInfo& param(const std::shared_ptr<Kernel::Impl>& impl, size_t index) {
  const Kernel::Impl& k = checked(impl);
  LIFTX_USER_CHECK(index < k.params.size(), "{} has {} inputs; there is no input {}",
                   k.program_name, k.params.size(), index);
  return k.params[index];
}
const ArrayInfo& result(const std::shared_ptr<Kernel::Impl>& impl, size_t index) {
  const Kernel::Impl& k = checked(impl);
  LIFTX_USER_CHECK(index < k.results.size(), "{} has {} output{}; there is no output {}",
                   k.program_name, k.results.size(), k.results.size() == 1 ? "" : "s", index);
  return k.results[index];
}
} // namespace

const std::string& Kernel::program_name() const {
  return checked(impl_).program_name;
}
const Sizes& Kernel::sizes() const {
  return checked(impl_).sizes;
}
const std::string& Kernel::variant() const {
  return checked(impl_).variant;
}
std::string Kernel::lowered_program() const {
  return checked(impl_).lowered;
}
const std::string& Kernel::opencl_source() const {
  return checked(impl_).launch.kernel.source;
}
size_t Kernel::inputs() const {
  return checked(impl_).params.size();
}
size_t Kernel::input_size(size_t index) const {
  return param(impl_, index).elements;
}
std::vector<int64_t> Kernel::input_shape(size_t index) const {
  return param(impl_, index).shape;
}
ScalarKind Kernel::input_kind(size_t index) const {
  return param(impl_, index).kind;
}
size_t Kernel::outputs() const {
  return checked(impl_).results.size();
}
size_t Kernel::output_size(size_t index) const {
  return result(impl_, index).elements;
}
std::vector<int64_t> Kernel::output_shape(size_t index) const {
  return result(impl_, index).shape;
}
ScalarKind Kernel::output_kind(size_t index) const {
  return result(impl_, index).kind;
}
size_t Kernel::output_size() const {
  return output_size(0);
}
std::vector<int64_t> Kernel::output_shape() const {
  return output_shape(0);
}
ScalarKind Kernel::output_kind() const {
  return output_kind(0);
}

} // namespace liftx
