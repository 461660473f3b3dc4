// Devices, contexts, buffers and compiling.
#include "api/internal.hpp"
#include "codegen/kernel.hpp"
#include "explore/rank.hpp"
#include "ir/interp/interp.hpp"
#include "rewrite/rules.hpp"
#include "rewrite/walk.hpp"
#include "runtime/launch.hpp"
#include "space/default_lowering.hpp"
#include "space/space.hpp"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace liftx {

std::string_view to_string(ScalarKind kind) {
  switch (kind) {
  case ScalarKind::Float:
    return "float";
  case ScalarKind::Int:
    return "int";
  case ScalarKind::Double:
    return "double";
  case ScalarKind::Bool:
    return "bool";
  }
  return "?";
}

KernelError kernel_error(runtime::Status status, const std::string& message) {
  return KernelError(std::string(runtime::to_string(status)), message);
}

namespace {

DeviceInfo info_of(const target::DeviceProfile& p) {
  DeviceInfo d;
  d.name = p.device_name;
  d.platform = p.platform_name;
  d.vendor = p.vendor;
  d.driver_version = p.driver_version;
  d.type = std::string(target::to_string(p.type));
  d.key = p.key;
  d.spec = p.index_spec();
  d.compute_units = p.compute_units;
  d.global_mem_bytes = p.global_mem_bytes;
  d.local_mem_bytes = p.local_mem_bytes;
  d.max_work_group_size = p.max_work_group_size;
  return d;
}

size_t element_bytes(ScalarKind kind) {
  if (kind == ScalarKind::Bool)
    throw NotImplemented("bool arrays as device buffers");
  return codegen::scalar_bytes(kind);
}

ArrayInfo array_of_type(const std::string& name, const ir::Type& type, const Sizes& sizes) {
  ArrayInfo a;
  a.name = name;
  const ir::Type base = ir::array_base(type);
  const auto* scalar = base.as<ir::ScalarType>();
  if (!scalar)
    throw NotImplemented(fmt::format("{} has type {}: parameters holding tuples cannot be "
                                     "passed through the API (pass one array per component and "
                                     "zip them)",
                                     name, type.to_string()));
  a.kind = scalar->kind;
  a.shape = interp::concrete_shape(type, sizes);
  a.elements = 1;
  for (int64_t d : a.shape)
    a.elements *= static_cast<size_t>(d);
  return a;
}

} // namespace

std::vector<ArrayInfo> parameter_arrays(const Program& program, const Sizes& sizes) {
  std::vector<ArrayInfo> out;
  for (const ir::Expr& p : program.params)
    out.push_back(array_of_type(p.as<ir::Param>()->name, p.type(), sizes));
  return out;
}

bool same_signature(const Program& a, const Program& b) {
  if (a.params.size() != b.params.size() || a.result_type() != b.result_type())
    return false;
  for (size_t i = 0; i < a.params.size(); ++i)
    if (a.params[i].type() != b.params[i].type())
      return false;
  return true;
}

std::vector<ArrayInfo> result_arrays(const Program& program, const Sizes& sizes) {
  const ir::Type type = program.result_type();
  // One output per stored component, as the kernel has them (KernelArg::output_index).
  const std::vector<ir::Type> components = codegen::stored_components(type);
  if (components.size() == 1)
    return {array_of_type("the result", type, sizes)};
  std::vector<ArrayInfo> out;
  for (size_t k = 0; k < components.size(); ++k)
    out.push_back(
        array_of_type(fmt::format("component {} of the result", k), components[k], sizes));
  return out;
}

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  for (const target::DeviceProfile& p : runtime::list_devices())
    out.push_back(info_of(p));
  return out;
}

// ---- Buffer -------------------------------------------------------------------------------------

ScalarKind Buffer::kind() const {
  LIFTX_USER_CHECK(impl_, "the Buffer is empty");
  return impl_->kind;
}
size_t Buffer::size() const {
  return impl_ ? impl_->elements : 0;
}
size_t Buffer::bytes() const {
  return impl_ ? impl_->elements * element_bytes(impl_->kind) : 0;
}
cl_mem Buffer::get() const {
  return impl_ ? impl_->buffer() : nullptr;
}

void Buffer::write_bytes(ScalarKind kind, const void* data, size_t count) {
  LIFTX_USER_CHECK(impl_, "write to an empty Buffer");
  LIFTX_USER_CHECK(kind == impl_->kind && count == impl_->elements,
                   "the Buffer holds {} {} elements; cannot write {} {} elements", impl_->elements,
                   to_string(impl_->kind), count, to_string(kind));
  if (count == 0)
    return;
  std::lock_guard lock(impl_->context->mutex);
  translating_opencl_errors([&] {
    runtime::check_cl(impl_->context->device.queue.enqueueWriteBuffer(
                          impl_->buffer, CL_TRUE, 0, count * element_bytes(kind), data),
                      "writing a buffer");
  });
}

void Buffer::read_bytes(ScalarKind kind, void* data, size_t count) const {
  LIFTX_USER_CHECK(impl_, "read from an empty Buffer");
  LIFTX_USER_CHECK(kind == impl_->kind && count == impl_->elements,
                   "the Buffer holds {} {} elements; cannot read them into {} {} elements",
                   impl_->elements, to_string(impl_->kind), count, to_string(kind));
  if (count == 0)
    return;
  std::lock_guard lock(impl_->context->mutex);
  translating_opencl_errors([&] {
    runtime::check_cl(impl_->context->device.queue.enqueueReadBuffer(
                          impl_->buffer, CL_TRUE, 0, count * element_bytes(kind), data),
                      "reading a buffer");
  });
}

// ---- Context ------------------------------------------------------------------------------------

Context::Context(std::string_view device, ContextOptions options)
    : impl_(std::make_shared<Impl>()) {
  impl_->device = translating_opencl_errors([&] { return runtime::select_device(device); });
  impl_->info = info_of(impl_->device.profile);
  impl_->options = std::move(options);
}

Context::~Context() = default;
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

const DeviceInfo& Context::device() const {
  LIFTX_USER_CHECK(impl_, "the Context was moved from");
  return impl_->info;
}

const ContextOptions& Context::options() const {
  LIFTX_USER_CHECK(impl_, "the Context was moved from");
  return impl_->options;
}

ContextStats Context::stats() const {
  LIFTX_USER_CHECK(impl_, "the Context was moved from");
  std::lock_guard lock(impl_->mutex);
  return impl_->stats;
}

cl_context Context::opencl_context() const {
  return impl_ ? impl_->device.context() : nullptr;
}
cl_command_queue Context::opencl_queue() const {
  return impl_ ? impl_->device.queue() : nullptr;
}
cl_device_id Context::opencl_device() const {
  return impl_ ? impl_->device.device() : nullptr;
}

Buffer KernelFactory::new_buffer(const std::shared_ptr<Context::Impl>& context, ScalarKind kind,
                                 size_t elements) {
  Buffer b;
  b.impl_ = std::make_shared<Buffer::Impl>();
  b.impl_->context = context;
  b.impl_->kind = kind;
  b.impl_->elements = elements;
  // OpenCL refuses empty buffers; an empty array still gets a (tiny) one.
  b.impl_->buffer = runtime::allocate(context->device, std::max<size_t>(4, b.bytes()));
  return b;
}

Buffer KernelFactory::to_device(const std::shared_ptr<Context::Impl>& context, const Input& in) {
  if (!in.device_.empty())
    return in.device_;
  Buffer b = new_buffer(context, in.kind_, in.count_);
  if (b.bytes() > 0)
    runtime::check_cl(
        context->device.queue.enqueueWriteBuffer(b.impl_->buffer, CL_TRUE, 0, b.bytes(), in.host_),
        "uploading an input");
  return b;
}

Buffer Context::buffer(ScalarKind kind, size_t elements) {
  LIFTX_USER_CHECK(impl_, "the Context was moved from");
  std::lock_guard lock(impl_->mutex);
  return translating_opencl_errors(
      [&] { return KernelFactory::new_buffer(impl_, kind, elements); });
}

Buffer Context::wrap(cl_mem memory, ScalarKind kind, size_t elements) {
  LIFTX_USER_CHECK(impl_, "the Context was moved from");
  LIFTX_USER_CHECK(memory != nullptr, "cannot wrap a null cl_mem");
  cl_context owner = nullptr;
  size_t bytes = 0;
  LIFTX_USER_CHECK(
      clGetMemObjectInfo(memory, CL_MEM_CONTEXT, sizeof owner, &owner, nullptr) == CL_SUCCESS &&
          clGetMemObjectInfo(memory, CL_MEM_SIZE, sizeof bytes, &bytes, nullptr) == CL_SUCCESS,
      "cannot wrap the cl_mem: it is not a valid OpenCL buffer");
  LIFTX_USER_CHECK(owner == impl_->device.context(),
                   "the cl_mem belongs to another OpenCL context than this Context's ({})",
                   impl_->info.name);
  const size_t needed = elements * element_bytes(kind);
  LIFTX_USER_CHECK(bytes >= needed, "the cl_mem has {} bytes, fewer than {} {} elements need ({})",
                   bytes, elements, to_string(kind), needed);
  Buffer b;
  b.impl_ = std::make_shared<Buffer::Impl>();
  b.impl_->context = impl_;
  b.impl_->kind = kind;
  b.impl_->elements = elements;
  b.impl_->buffer = cl::Buffer(memory, /*retainObject=*/true);
  return b;
}

Kernel Context::compile(const Program& program, const Sizes& sizes, const CompileOptions& options) {
  LIFTX_USER_CHECK(impl_, "the Context was moved from");
  return translating_opencl_errors([&] { return compile_checked(program, sizes, options); });
}

Kernel Context::compile_checked(const Program& program, const Sizes& sizes,
                                const CompileOptions& options) {
  interp::check_sizes(program, sizes);
  // What cannot be passed through the API is refused before anything is lowered or checked.
  parameter_arrays(program, sizes);
  result_arrays(program, sizes);
  auto [lowered, strategy] = space::default_lowering(program, sizes);
  exec::RunOptions run;
  run.global = options.global;
  run.local = options.local;
  run.check = true;
  run.time = false;
  run.roofline = false;
  run.seed = options.seed;
  run.tolerance = options.tolerance;
  run.reference = &program;
  std::lock_guard lock(impl_->mutex);
  if (options.verify) {
    const exec::RunReport report = exec::run_program(impl_->device, lowered, sizes, run);
    ++impl_->stats.verifications;
    if (report.status != runtime::Status::ok)
      throw kernel_error(report.status,
                         fmt::format("the kernel of {} ({}) failed its check on {}: {}",
                                     program.name, strategy, impl_->info.name, report.message));
  }
  return KernelFactory::make(impl_, lowered, sizes, run, program.name, strategy);
}

} // namespace liftx
