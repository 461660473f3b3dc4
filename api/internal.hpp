#pragma once
// Private to liftx_api (not installed): the state behind the public handles, and how the API's
// parts make kernels. Everything here assumes the caller holds the context's lock where it says
// so.
#include "exec/run.hpp"
#include "liftx/runtime.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "runtime/status.hpp"

#include <type_traits>

#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace liftx {

static_assert(std::is_same_v<Sizes, Sizes>, "the API's sizes are the interpreter's");

struct Context::Impl {
  runtime::Device device;
  DeviceInfo info;
  ContextOptions options;
  /// Serialises every use of the device (queue, kernels' arguments, buffers) and the stats.
  std::mutex mutex;
  ContextStats stats;
};

struct Buffer::Impl {
  std::shared_ptr<Context::Impl> context;
  cl::Buffer buffer;
  ScalarKind kind = ScalarKind::Float;
  size_t elements = 0;
};

/// What a program parameter or result needs at run time.
struct ArrayInfo {
  std::string name;
  ScalarKind kind = ScalarKind::Float;
  std::vector<int64_t> shape; ///< outermost first
  size_t elements = 0;
};

/// The parameters of `program` at `sizes`, in order. NotImplemented for tuple-typed arrays.
std::vector<ArrayInfo> parameter_arrays(const Program& program, const Sizes& sizes);
/// The outputs of `program` at `sizes`: the result, or for a result holding a tuple per point
/// one array per scalar component (codegen::stored_components: nested tuples flattened, in
/// order), each of the result's shape without the tuple.
std::vector<ArrayInfo> result_arrays(const Program& program, const Sizes& sizes);
/// Whether `a` and `b` take parameters of the same types and give results of the same type (a
/// lowered program stands for a high-level one only then).
bool same_signature(const Program& a, const Program& b);

struct Kernel::Impl {
  std::shared_ptr<Context::Impl> context;
  std::string program_name;
  Sizes sizes;
  std::string variant;
  std::string lowered; ///< printed module
  codegen::PreparedLaunch launch;
  cl::Kernel kernel;
  cl::NDRange global;
  cl::NDRange local;
  std::vector<ArrayInfo> params;
  std::vector<int> param_args;     ///< kernel argument index of each parameter (-1: unused)
  std::vector<cl::Buffer> staging; ///< per parameter, for host inputs (allocated on first use)
  std::vector<ArrayInfo> results;  ///< one per output (tuple component), in order
  std::vector<int> result_args;    ///< kernel argument index of each output
  std::vector<cl::Buffer> result_staging; ///< per output, for host outputs (on first use)
  std::vector<cl::Buffer> temporaries;
  /// Grids the kernel reads from one buffer (ir/storage.hpp), packed from the host inputs of
  /// their parameters before every run.
  struct StoredGroup {
    ir::StorageGroup group;
    int arg = -1;       ///< its kernel argument
    cl::Buffer staging; ///< allocated on first use
  };
  std::vector<StoredGroup> groups;
  /// An iterated program (codegen::Kernel::launches > 1): the buffer its launches alternate with
  /// the output (allocated on first use).
  cl::Buffer iteration_buffer;
  /// The tail of a host iteration (codegen::Kernel::tail): its kernel, launch and argument
  /// indices, launched after this kernel's launches on the same buffers.
  struct Tail {
    cl::Kernel kernel;
    cl::NDRange global;
    cl::NDRange local;
    std::vector<int> param_args;
    std::vector<int> result_args;
  };
  std::optional<Tail> tail;
};

/// How the implementation makes and runs Kernels.
struct KernelFactory {
  static const std::shared_ptr<Context::Impl>& context_of(const Context& context) {
    return context.impl_;
  }
  /// Generates, builds and binds the kernel of the lowered program `lowered` with the launch
  /// `launch_options` asks for (global/local). Does not verify. Caller holds the lock.
  /// Packs the host inputs of `g`'s grids into its buffer and sets its kernel argument.
  static cl_mem bind_group(Kernel::Impl& k, Kernel::Impl::StoredGroup& g,
                           const std::vector<Input>& inputs);
  static Kernel make(const std::shared_ptr<Context::Impl>& context, const Program& lowered,
                     const Sizes& sizes, const exec::RunOptions& launch_options,
                     std::string program_name, std::string variant);
  /// The device buffer for input `index`: its Buffer, or the kernel's staging buffer holding a
  /// copy of its host data. UserError for a wrong kind or length or a foreign Buffer.
  static const cl::Buffer& bind_input(Kernel::Impl& kernel, size_t index, const Input& input);
  /// UserError unless `input` fits `param` (kind, element count, this context) ; `which` names
  /// the input in the message.
  static void check_input(const std::shared_ptr<Context::Impl>& context, const ArrayInfo& param,
                          const Input& input, const std::string& which);
  static Kernel::Impl& impl_of(const Kernel& kernel) { return *kernel.impl_; }
  /// A new device array (caller holds the lock).
  static Buffer new_buffer(const std::shared_ptr<Context::Impl>& context, ScalarKind kind,
                           size_t elements);
  /// The input as a device array: its Buffer, or a new one holding a copy of its host data
  /// (caller holds the lock).
  static Buffer to_device(const std::shared_ptr<Context::Impl>& context, const Input& input);
  /// Kernel::run without taking the lock (the caller holds it): one Output per output.
  static RunStats run_locked(const Kernel& kernel, const std::vector<Input>& inputs,
                             const std::vector<Output>& outputs);
};

/// The KernelError for a failed status.
KernelError kernel_error(runtime::Status status, const std::string& message);

/// Runs `f`, turning an OpenCL failure (runtime::LaunchError) into a KernelError, so that the
/// API throws only the exceptions it documents.
template <class F>
decltype(auto) translating_opencl_errors(F&& f) {
  try {
    return f();
  } catch (const runtime::LaunchError& e) {
    throw kernel_error(e.status(), e.what());
  }
}

/// "global 512x512 local 16x16 tied" for a prepared launch (local 0 = chosen by the driver).

} // namespace liftx
