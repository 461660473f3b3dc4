#pragma once
/// The liftx runtime: choose an OpenCL device (Context), compile a program for concrete sizes
/// (Kernel: generated, built once thanks to the build cache, and checked against the reference
/// interpreter on random inputs), bind host arrays or device buffers, run and time.
///
///   liftx::Context ctx("cpu");                          // PoCL, or "gpu", "nvidia", "P:D", ...
///   liftx::Kernel k = ctx.compile(program, {{"M", 512}, {"N", 512}});
///   std::vector<float> out;
///   k.run({grid}, out);                                 // grid: std::vector<float> of M*N
///
/// Thread safety: a Context serialises every device operation made through it (its kernels'
/// runs, its buffers' reads and writes, compile, tune) with one internal lock, so a Context and
/// the Kernels and Buffers made from it may be used from several threads; the calls then run one
/// after another. Independent Contexts (one per thread, say) run concurrently. Programs are
/// immutable and may be shared freely.
#include "liftx/errors.hpp"
#include "liftx/program.hpp"

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

/// The installed share/liftx folder, as the CMake package found it (empty in the build tree).
#ifndef LIFTX_PACKAGE_DATA_DIR
#define LIFTX_PACKAGE_DATA_DIR ""
#endif

namespace liftx {

using ir::ScalarKind;

/// Element types of device arrays: float, int32_t (OpenCL int) and double.
template <class T>
concept Element =
    std::is_same_v<T, float> || std::is_same_v<T, int32_t> || std::is_same_v<T, double>;

template <Element T>
constexpr ScalarKind element_kind() {
  if constexpr (std::is_same_v<T, float>)
    return ScalarKind::Float;
  else if constexpr (std::is_same_v<T, int32_t>)
    return ScalarKind::Int;
  else
    return ScalarKind::Double;
}

/// "float", "int", "double", "bool".
std::string_view to_string(ScalarKind kind);

/// An OpenCL device as liftx sees it.
struct DeviceInfo {
  std::string name;
  std::string platform;
  std::string vendor;
  std::string driver_version;
  std::string type; ///< "cpu", "gpu", "accelerator" or "other"
  /// Stable across runs: vendor, device name and driver version. Keys the build cache and the
  /// tuned winners.
  std::string key;
  std::string spec; ///< "P:D": the Context spec that selects exactly this device
  uint32_t compute_units = 0;
  uint64_t global_mem_bytes = 0;
  uint64_t local_mem_bytes = 0;
  uint64_t max_work_group_size = 0;
};

/// Every OpenCL device of every platform; empty when no OpenCL driver is registered.
std::vector<DeviceInfo> devices();

class Context;
class Kernel;
struct KernelFactory;

/// A device array of `size()` elements of one kind, owned by (or wrapped into) a Context. Copies
/// share the array. Reads and writes are blocking.
class Buffer {
public:
  Buffer() = default; ///< no array; empty() is true
  bool empty() const { return !impl_; }
  ScalarKind kind() const;
  size_t size() const; ///< elements
  size_t bytes() const;
  /// The OpenCL memory object (still owned by the Buffer).
  cl_mem get() const;

  /// Copies `data` (exactly size() elements of kind()) to the device. UserError otherwise.
  template <Element T>
  void write(std::span<const T> data) {
    write_bytes(element_kind<T>(), data.data(), data.size());
  }
  template <Element T>
  void write(const std::vector<T>& data) {
    write(std::span<const T>(data));
  }
  /// Copies the array into `out` (exactly size() elements of kind()).
  template <Element T>
  void read(std::span<T> out) const {
    read_bytes(element_kind<T>(), out.data(), out.size());
  }
  template <Element T>
  std::vector<T> read() const {
    std::vector<T> out(size());
    read(std::span<T>(out));
    return out;
  }

  struct Impl;

private:
  friend class Context;
  friend struct KernelFactory;
  void write_bytes(ScalarKind kind, const void* data, size_t count);
  void read_bytes(ScalarKind kind, void* data, size_t count) const;
  std::shared_ptr<Impl> impl_;
};

/// One input of a run: host data (copied to the device at each run) or a Buffer (used in
/// place). Implicit from std::vector<T>, std::span<const T> and Buffer, so `k.run({a, b}, out)`.
class Input {
public:
  template <Element T>
  Input(std::span<const T> host) ///< NOLINT(implicit)
      : kind_(element_kind<T>()), host_(host.data()), count_(host.size()) {}
  template <Element T>
  Input(std::span<T> host) : Input(std::span<const T>(host)) {} ///< NOLINT(implicit)
  template <Element T>
  Input(const std::vector<T>& host) : Input(std::span<const T>(host)) {} ///< NOLINT(implicit)
  Input(const Buffer& device) : device_(device) {}                       ///< NOLINT(implicit)

private:
  friend struct KernelFactory;
  ScalarKind kind_ = ScalarKind::Float;
  const void* host_ = nullptr;
  size_t count_ = 0;
  Buffer device_;
};

/// Where a run writes the program's result: host memory (copied back after the run; a
/// std::vector is resized to the result's length) or a Buffer (written in place). A program whose
/// result holds a tuple per point has one output per scalar component (struct of arrays), each
/// of the result's shape; a run then takes one Output per component, in order.
class Output {
public:
  template <Element T>
  Output(std::span<T> host) ///< NOLINT(implicit)
      : kind_(element_kind<T>()), host_(host.data()), count_(host.size()) {}
  template <Element T>
  Output(std::vector<T>& host) ///< NOLINT(implicit)
      : kind_(element_kind<T>()), vector_(&host), resize_(&resize_vector<T>) {}
  Output(Buffer& device) : device_(device) {} ///< NOLINT(implicit)

private:
  friend struct KernelFactory;
  template <class T>
  static void* resize_vector(void* vector, size_t count) {
    auto* v = static_cast<std::vector<T>*>(vector);
    v->resize(count);
    return v->data();
  }
  ScalarKind kind_ = ScalarKind::Float;
  void* host_ = nullptr;
  size_t count_ = 0;
  void* vector_ = nullptr;
  void* (*resize_)(void*, size_t) = nullptr;
  Buffer device_;
};

/// What one run took.
struct RunStats {
  double kernel_ms = 0; ///< the kernel's execution, from OpenCL profiling events
  double total_ms = 0;  ///< the whole call: uploads, launch, wait, downloads
};

/// A program compiled for one Context and one set of sizes, ready to run. Copies share it.
class Kernel {
public:
  Kernel() = default; ///< nothing compiled; run() is a UserError
  bool empty() const { return !impl_; }

  /// Runs once and waits for the result. `inputs`: one per program parameter, in order, each
  /// with exactly the parameter's element count (row-major, outermost dimension first) and kind.
  /// UserError for a wrong count, length or kind, a Buffer of another Context, or an output
  /// Buffer that is also an input; KernelError if the device fails. For programs with one
  /// output (outputs() == 1); a UserError for a program whose result is a tuple per point.
  RunStats run(const std::vector<Input>& inputs, const Output& output) const;
  /// The same with one Output per output (outputs() of them, in order: for a result of tuples,
  /// component k of every point goes to outputs[k]), e.g. `k.run({grid}, {dx, dy})`. Also a
  /// UserError for a wrong number of outputs, or the same Buffer or vector given twice.
  RunStats run(const std::vector<Input>& inputs, const std::vector<Output>& outputs) const;
  /// `k.run(inputs, {a, b})`, and `{out}` for one output (a braced list is always outputs).
  RunStats run(const std::vector<Input>& inputs, std::initializer_list<Output> outputs) const {
    return run(inputs, std::vector<Output>(outputs));
  }

  const std::string& program_name() const;
  const Sizes& sizes() const;
  /// How the program was lowered and launched, e.g. "global2d_10 | global 512x512 local 0x0
  /// tied", or "as written | ..." for an already lowered program.
  const std::string& variant() const;
  /// The lowered program as a .lift module.
  std::string lowered_program() const;
  const std::string& opencl_source() const;

  size_t inputs() const;
  /// Elements of parameter `index` (UserError if out of range), its shape outermost first, and
  /// its kind.
  size_t input_size(size_t index) const;
  std::vector<int64_t> input_shape(size_t index) const;
  ScalarKind input_kind(size_t index) const;
  /// Arrays a run writes: 1 for a result of scalars; for a result holding a tuple per point,
  /// one per scalar component (nested tuples flattened), in the order of the tuple.
  size_t outputs() const;
  /// Elements of output `index` (UserError if out of range), its shape outermost first (the
  /// result's grid, the same for every output), and its kind.
  size_t output_size(size_t index) const;
  std::vector<int64_t> output_shape(size_t index) const;
  ScalarKind output_kind(size_t index) const;
  /// Of output 0: the result's for a program with one output.
  size_t output_size() const;
  std::vector<int64_t> output_shape() const;
  ScalarKind output_kind() const;

  struct Impl;

private:
  friend class Context;
  friend struct KernelFactory;
  std::shared_ptr<Impl> impl_;
};

struct ContextOptions {
  /// The installed share/liftx folder; the shipped models are in its model/ folder. Set by the
  /// CMake package for installed copies. The model is looked for in $LIFTX_MODEL_DIR, then
  /// here, then in the liftx source tree this library was built from.
  std::string data_dir = LIFTX_PACKAGE_DATA_DIR;
  /// The tuning database (SQLite): empty = $LIFTX_TUNING_DB, else <cache dir>/tuning.db with
  /// <cache dir> = $LIFTX_CACHE_DIR, $XDG_CACHE_HOME/liftx, ~/.cache/liftx or /tmp/liftx-cache.
  std::string tuning_db;
};

struct CompileOptions {
  /// Check the kernel's result on random inputs (at these sizes) against the reference
  /// interpreter before returning it. Only turn off for kernels verified before.
  bool verify = true;
  uint64_t seed = 1;       ///< of the random inputs of the check
  double tolerance = 1e-4; ///< |kernel - interpreter| <= tolerance * max(s, |interpreter|),
                           ///< s the output's largest |interpreter|, at most 1
  /// Thread counts per dimension; empty = the launch rule of the kernel (threads tied to the
  /// mapped lengths). Give both to use free thread counts.
  std::vector<int64_t> global;
  std::vector<int64_t> local;
};

/// What a Context has done so far (tests and reports count runs with it).
struct ContextStats {
  int64_t compiles = 0;       ///< Kernels made (compile, tune's winner, a reused winner)
  int64_t verifications = 0;  ///< kernels checked against the reference interpreter
  int64_t timed_variants = 0; ///< variants timed while tuning
  int64_t runs = 0;           ///< Kernel::run calls that launched a kernel
};

/// An OpenCL device with its context and in-order, profiling command queue. Movable, not
/// copyable; Kernels and Buffers made from it keep the device alive.
class Context {
public:
  /// Opens the first device matching `device`: "cpu", "gpu", "accelerator" (by type); "pocl",
  /// "nvidia", "amd", "intel" (by platform or vendor); "P:D" (indices, as devices() lists them);
  /// otherwise a case-insensitive substring of the device or platform name. UserError when none
  /// matches, listing the devices there are.
  explicit Context(std::string_view device = "cpu", ContextOptions options = {});
  ~Context();
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& device() const;
  const ContextOptions& options() const;
  ContextStats stats() const;

  /// Compiles `program` for `sizes` (every size variable bound, each >= 1). A high-level program
  /// (map, reduce, ...) is lowered by the first lowering strategy that applies (global 2D, global
  /// 1D, work-groups); use tune() to search for the fastest variant instead. A lowered program
  /// (mapGlb, mapWrg/mapLcl, mapSeq, ...) is used as written. UserError for bad sizes or a
  /// program that cannot be lowered; KernelError if the kernel fails to build or its check.
  Kernel compile(const Program& program, const Sizes& sizes, const CompileOptions& options = {});

  /// A new uninitialised device array.
  Buffer buffer(ScalarKind kind, size_t elements);
  template <Element T>
  Buffer buffer(size_t elements) {
    return buffer(element_kind<T>(), elements);
  }
  /// A new device array holding `data`.
  template <Element T>
  Buffer upload(std::span<const T> data) {
    Buffer b = buffer(element_kind<T>(), data.size());
    b.write(data);
    return b;
  }
  template <Element T>
  Buffer upload(const std::vector<T>& data) {
    return upload(std::span<const T>(data));
  }
  /// An existing OpenCL buffer of this Context's OpenCL context holding `elements` of `kind`
  /// (retained while the Buffer lives). UserError if it belongs to another context or is
  /// smaller than that.
  Buffer wrap(cl_mem memory, ScalarKind kind, size_t elements);

  /// The OpenCL objects, for interoperating with the application's own OpenCL code. Commands
  /// the application enqueues on another queue must be synchronised by the application.
  cl_context opencl_context() const;
  cl_command_queue opencl_queue() const;
  cl_device_id opencl_device() const;

  struct Impl;

private:
  friend struct KernelFactory;
  Kernel compile_checked(const Program& program, const Sizes& sizes, const CompileOptions& options);
  std::shared_ptr<Impl> impl_;
};

} // namespace liftx
