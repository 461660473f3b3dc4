#pragma once
/// Setting kernel arguments, launching, timing with profiling events, and moving float data.
#include "runtime/device.hpp"
#include "runtime/status.hpp"

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace liftx::runtime {

/// An OpenCL call failed while preparing or running a kernel. status() is out_of_resources for
/// CL_OUT_OF_RESOURCES, CL_INVALID_WORK_GROUP_SIZE and CL_MEM_OBJECT_ALLOCATION_FAILURE (the
/// variant asks for more than the device has), run_error otherwise.
class LaunchError : public std::runtime_error {
public:
  LaunchError(Status status, cl_int code, const std::string& message)
      : std::runtime_error(message), status_(status), code_(code) {}
  Status status() const { return status_; }
  cl_int code() const { return code_; } ///< the OpenCL status code (CL_SUCCESS if none)

private:
  Status status_;
  cl_int code_;
};

/// The Status an OpenCL error code stands for (ok for CL_SUCCESS).
Status status_of(cl_int code);

/// Throws LaunchError(status_of(code), code, "<what>: <CL name>") unless code is CL_SUCCESS.
void check_cl(cl_int code, const std::string& what);

/// `bytes` of __local memory for a `__local T*` kernel parameter.
struct LocalMemory {
  size_t bytes = 0;
};

/// A kernel with its arguments set in order: `Kernel k(program, "f"); k.arg(in).arg(out).arg(n);`
class Kernel {
public:
  /// UserError if the program has no kernel called `name`.
  Kernel(const cl::Program& program, const std::string& name);

  Kernel& arg(const cl::Buffer& buffer);
  Kernel& arg(int32_t value);
  Kernel& arg(int64_t value);
  Kernel& arg(float value);
  Kernel& arg(LocalMemory local);

  const std::string& name() const { return name_; }
  cl_uint next_index() const { return next_; }
  cl::Kernel& get() { return kernel_; }

private:
  template <class T>
  Kernel& set(const T& value, const char* kind);
  cl::Kernel kernel_;
  std::string name_;
  cl_uint next_ = 0;
};

/// Kernel times in milliseconds, from profiling events (start to end of execution).
struct Timing {
  std::vector<double> samples_ms; ///< in launch order
  double median_ms = 0;
  double min_ms = 0;
  double max_ms = 0;
  double q1_ms = 0; ///< first quartile
  double q3_ms = 0; ///< third quartile
  double iqr_ms() const { return q3_ms - q1_ms; }
};

/// Median, extremes and quartiles (linear interpolation) of non-empty samples.
Timing summarize_samples(std::vector<double> samples_ms);

/// The least wall time a warm-up lasts when one is asked for. An idle GPU runs at a fraction
/// of its clock (an H200 at 345 of 1,980 MHz) until it has been busy for milliseconds; three
/// launches of a 7 us kernel are not enough, and their timed runs came out 9% slower on average
/// (0.0070 against 0.0064 ms, five alternating pairs of 30-run medians).
inline constexpr double kMinWarmupMs = 20;

/// Calls `run` `warmup` times, and when `warmup` > 0 on until kMinWarmupMs have passed.
void warm_up(int warmup, const std::function<void()>& run);

/// Pass as `local` to let the OpenCL runtime choose the work-group size.
inline const cl::NDRange& runtime_chooses_local() {
  return cl::NullRange;
}

/// One launch, waited for; returns its profiled time in ms. LaunchError on failure.
double run_kernel(Device& device, cl::Kernel& kernel, const cl::NDRange& global,
                  const cl::NDRange& local);
inline double run_kernel(Device& device, Kernel& kernel, const cl::NDRange& global,
                         const cl::NDRange& local) {
  return run_kernel(device, kernel.get(), global, local);
}

/// `launches` (>= 1) launches of one kernel in order, `before(k)` called before launch k (to set
/// the arguments that change: host-side iteration swaps two buffers), waited for once at the end;
/// returns the profiled time from the first launch's start to the last one's end in ms.
/// LaunchError on failure.
double run_kernel_sequence(Device& device, cl::Kernel& kernel, const cl::NDRange& global,
                           const cl::NDRange& local, int64_t launches,
                           const std::function<void(int64_t)>& before);

/// Launches of one kernel in a sequence of several kernels (a host iteration and its tail).
struct LaunchStage {
  cl::Kernel* kernel = nullptr;
  cl::NDRange global;
  cl::NDRange local;
  int64_t launches = 1;
};

/// run_kernel_sequence over the stages in order; `before(k)` counts launches across them.
double run_launch_stages(Device& device, const std::vector<LaunchStage>& stages,
                         const std::function<void(int64_t)>& before);

/// time_kernel_sequence over the stages in order: one sample per sequence of all of them.
Timing time_launch_stages(Device& device, const std::vector<LaunchStage>& stages,
                          const std::function<void(int64_t)>& before, int warmup, int repeat);

/// `warmup` untimed launches (warm_up: at least kMinWarmupMs of them), then `repeat` (>= 1)
/// timed ones, each waited for.
Timing time_kernel(Device& device, cl::Kernel& kernel, const cl::NDRange& global,
                   const cl::NDRange& local, int warmup, int repeat);
inline Timing time_kernel(Device& device, Kernel& kernel, const cl::NDRange& global,
                          const cl::NDRange& local, int warmup, int repeat) {
  return time_kernel(device, kernel.get(), global, local, warmup, repeat);
}

/// time_kernel for sequences of `launches` launches (run_kernel_sequence): one sample per sequence.
Timing time_kernel_sequence(Device& device, cl::Kernel& kernel, const cl::NDRange& global,
                            const cl::NDRange& local, int64_t launches,
                            const std::function<void(int64_t)>& before, int warmup, int repeat);

/// A device buffer of `bytes` (> 0). LaunchError(out_of_resources) if the device refuses.
cl::Buffer allocate(Device& device, size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);
/// A new buffer holding `data` (non-empty).
cl::Buffer upload(Device& device, const std::vector<float>& data,
                  cl_mem_flags flags = CL_MEM_READ_WRITE);
/// Copies `data` into the start of `buffer`.
void upload(Device& device, const cl::Buffer& buffer, const std::vector<float>& data);
/// The first `count` floats of `buffer`.
std::vector<float> download(Device& device, const cl::Buffer& buffer, size_t count);

/// The bit pattern `poison` writes: a quiet NaN with a recognisable payload.
inline constexpr uint32_t kPoisonBits = 0x7fc0deadU;
/// Whether `value` carries exactly the poison pattern (an output the kernel never wrote).
bool is_poison(float value);
/// Fills the first `bytes` (a multiple of 4) of `buffer` with kPoisonBits, so that outputs a
/// kernel fails to write cannot pass verification by accident.
void poison(Device& device, const cl::Buffer& buffer, size_t bytes);

/// "X", "X,Y" or "X,Y,Z" of the range; "auto" for NullRange.
std::string to_string(const cl::NDRange& range);

} // namespace liftx::runtime
