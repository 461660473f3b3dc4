#include "runtime/launch.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>

namespace liftx::runtime {

Status status_of(cl_int code) {
  switch (code) {
  case CL_SUCCESS:
    return Status::ok;
  case CL_OUT_OF_RESOURCES:
  case CL_INVALID_WORK_GROUP_SIZE:
  case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    return Status::out_of_resources;
  default:
    return Status::run_error;
  }
}

void check_cl(cl_int code, const std::string& what) {
  if (code != CL_SUCCESS)
    throw LaunchError(status_of(code), code, fmt::format("{}: {}", what, cl_error_name(code)));
}

Kernel::Kernel(const cl::Program& program, const std::string& name) : name_(name) {
  cl_int err = CL_SUCCESS;
  kernel_ = cl::Kernel(program, name.c_str(), &err);
  if (err == CL_INVALID_KERNEL_NAME) {
    cl_int names_err = CL_SUCCESS;
    std::string names = program.getInfo<CL_PROGRAM_KERNEL_NAMES>(&names_err);
    while (!names.empty() && names.back() == '\0')
      names.pop_back();
    throw UserError(fmt::format("the program has no kernel '{}' (kernels: {})", name,
                                names_err == CL_SUCCESS && !names.empty() ? names : "none"));
  }
  check_cl(err, fmt::format("cannot create kernel '{}'", name));
}

template <class T>
Kernel& Kernel::set(const T& value, const char* kind) {
  cl_int err = kernel_.setArg(next_, value);
  check_cl(err, fmt::format("kernel '{}': cannot set argument {} ({})", name_, next_, kind));
  ++next_;
  return *this;
}

Kernel& Kernel::arg(const cl::Buffer& buffer) {
  return set(buffer, "buffer");
}
Kernel& Kernel::arg(int32_t value) {
  return set(static_cast<cl_int>(value), "int");
}
Kernel& Kernel::arg(int64_t value) {
  return set(static_cast<cl_long>(value), "long");
}
Kernel& Kernel::arg(float value) {
  return set(static_cast<cl_float>(value), "float");
}
Kernel& Kernel::arg(LocalMemory local) {
  if (local.bytes == 0)
    throw LaunchError(
        Status::run_error, CL_INVALID_ARG_SIZE,
        fmt::format("kernel '{}': local memory argument {} of 0 bytes", name_, next_));
  return set(cl::Local(local.bytes), "local memory");
}

Timing summarize_samples(std::vector<double> samples_ms) {
  LIFTX_INTERNAL_CHECK(!samples_ms.empty(), "no timing samples");
  Timing timing;
  timing.samples_ms = samples_ms;
  std::sort(samples_ms.begin(), samples_ms.end());
  auto quantile = [&](double q) {
    double position = q * static_cast<double>(samples_ms.size() - 1);
    auto below = static_cast<size_t>(position);
    size_t above = std::min(below + 1, samples_ms.size() - 1);
    double fraction = position - static_cast<double>(below);
    return samples_ms[below] + fraction * (samples_ms[above] - samples_ms[below]);
  };
  timing.min_ms = samples_ms.front();
  timing.max_ms = samples_ms.back();
  timing.median_ms = quantile(0.5);
  timing.q1_ms = quantile(0.25);
  timing.q3_ms = quantile(0.75);
  return timing;
}

namespace {

void check_timing_counts(int warmup, int repeat) {
  LIFTX_USER_CHECK(repeat >= 1 && warmup >= 0,
                   "timing needs repeat >= 1 and warmup >= 0 (got {} and {})", repeat, warmup);
}

/// Waits for `event` and reports a failed execution as a LaunchError.
void wait_for(cl::Event& event) {
  cl_int err = event.wait();
  cl_int execution = CL_COMPLETE;
  cl_int info_err = event.getInfo(CL_EVENT_COMMAND_EXECUTION_STATUS, &execution);
  if (info_err == CL_SUCCESS && execution < 0)
    err = execution;
  check_cl(err, "the kernel failed");
}

/// Milliseconds from the start of `first` to the end of `last` (profiling events).
double elapsed_ms(cl::Event& first, cl::Event& last) {
  cl_ulong start = 0, end = 0;
  check_cl(first.getProfilingInfo(CL_PROFILING_COMMAND_START, &start), "no profiling start time");
  check_cl(last.getProfilingInfo(CL_PROFILING_COMMAND_END, &end), "no profiling end time");
  return end >= start ? static_cast<double>(end - start) * 1e-6 : 0.0;
}

} // namespace

double run_launch_stages(Device& device, const std::vector<LaunchStage>& stages,
                         const std::function<void(int64_t)>& before) {
  int64_t launches = 0;
  for (const LaunchStage& stage : stages) {
    LIFTX_INTERNAL_CHECK(stage.global.dimensions() >= 1, "a launch needs a global size");
    LIFTX_INTERNAL_CHECK(stage.launches >= 1, "a sequence of {} launches", stage.launches);
    launches += stage.launches;
  }
  LIFTX_INTERNAL_CHECK(launches >= 1, "a sequence of no launches");
  cl::Event first, last;
  int64_t k = 0;
  for (const LaunchStage& stage : stages)
    for (int64_t j = 0; j < stage.launches; ++j, ++k) {
      before(k);
      cl::Event event;
      check_cl(device.queue.enqueueNDRangeKernel(*stage.kernel, cl::NullRange, stage.global,
                                                 stage.local, nullptr, &event),
               fmt::format("cannot launch the kernel (global {}, local {}{})",
                           to_string(stage.global), to_string(stage.local),
                           launches == 1 ? "" : fmt::format(", launch {} of {}", k + 1, launches)));
      if (k == 0)
        first = event;
      last = event;
    }
  // The queue is in order: the last launch ending means every one ended, but a failure of an
  // earlier one must not pass unnoticed.
  wait_for(last);
  wait_for(first);
  return elapsed_ms(first, last);
}

void warm_up(int warmup, const std::function<void()>& run) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const auto least = std::chrono::duration<double, std::milli>(kMinWarmupMs);
  for (int i = 0; i < warmup || (warmup > 0 && Clock::now() - start < least); ++i)
    run();
}

Timing time_launch_stages(Device& device, const std::vector<LaunchStage>& stages,
                          const std::function<void(int64_t)>& before, int warmup, int repeat) {
  check_timing_counts(warmup, repeat);
  warm_up(warmup, [&] { run_launch_stages(device, stages, before); });
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(repeat));
  for (int i = 0; i < repeat; ++i)
    samples.push_back(run_launch_stages(device, stages, before));
  return summarize_samples(std::move(samples));
}

double run_kernel_sequence(Device& device, cl::Kernel& kernel, const cl::NDRange& global,
                           const cl::NDRange& local, int64_t launches,
                           const std::function<void(int64_t)>& before) {
  return run_launch_stages(device, {LaunchStage{&kernel, global, local, launches}}, before);
}

Timing time_kernel_sequence(Device& device, cl::Kernel& kernel, const cl::NDRange& global,
                            const cl::NDRange& local, int64_t launches,
                            const std::function<void(int64_t)>& before, int warmup, int repeat) {
  return time_launch_stages(device, {LaunchStage{&kernel, global, local, launches}}, before, warmup,
                            repeat);
}

double run_kernel(Device& device, cl::Kernel& kernel, const cl::NDRange& global,
                  const cl::NDRange& local) {
  return run_kernel_sequence(device, kernel, global, local, 1, [](int64_t) {});
}

Timing time_kernel(Device& device, cl::Kernel& kernel, const cl::NDRange& global,
                   const cl::NDRange& local, int warmup, int repeat) {
  return time_kernel_sequence(
      device, kernel, global, local, 1, [](int64_t) {}, warmup, repeat);
}

cl::Buffer allocate(Device& device, size_t bytes, cl_mem_flags flags) {
  LIFTX_USER_CHECK(bytes != 0, "cannot allocate an empty OpenCL buffer");
  if (device.profile.max_alloc_bytes > 0 && bytes > device.profile.max_alloc_bytes)
    throw LaunchError(Status::out_of_resources, CL_INVALID_BUFFER_SIZE,
                      fmt::format("a buffer of {} bytes exceeds the device's largest allocation "
                                  "({} bytes)",
                                  bytes, device.profile.max_alloc_bytes));
  cl_int err = CL_SUCCESS;
  cl::Buffer buffer(device.context, flags, bytes, nullptr, &err);
  check_cl(err, fmt::format("cannot allocate a buffer of {} bytes", bytes));
  return buffer;
}

cl::Buffer upload(Device& device, const std::vector<float>& data, cl_mem_flags flags) {
  cl::Buffer buffer = allocate(device, data.size() * sizeof(float), flags);
  upload(device, buffer, data);
  return buffer;
}

void upload(Device& device, const cl::Buffer& buffer, const std::vector<float>& data) {
  if (data.empty())
    return;
  check_cl(
      device.queue.enqueueWriteBuffer(buffer, CL_TRUE, 0, data.size() * sizeof(float), data.data()),
      "cannot upload to a device buffer");
}

std::vector<float> download(Device& device, const cl::Buffer& buffer, size_t count) {
  std::vector<float> data(count);
  if (count == 0)
    return data;
  check_cl(device.queue.enqueueReadBuffer(buffer, CL_TRUE, 0, count * sizeof(float), data.data()),
           "cannot download a device buffer");
  return data;
}

bool is_poison(float value) {
  return std::bit_cast<uint32_t>(value) == kPoisonBits;
}

void poison(Device& device, const cl::Buffer& buffer, size_t bytes) {
  LIFTX_INTERNAL_CHECK(bytes % sizeof(float) == 0, "poison of {} bytes (not whole floats)", bytes);
  if (bytes == 0)
    return;
  cl_uint pattern = kPoisonBits;
  check_cl(device.queue.enqueueFillBuffer(buffer, pattern, 0, bytes), "cannot poison a buffer");
  check_cl(device.queue.finish(), "cannot poison a buffer");
}

std::string to_string(const cl::NDRange& range) {
  if (range.dimensions() == 0)
    return "auto";
  std::string text;
  for (cl_uint i = 0; i < range.dimensions(); ++i)
    text += fmt::format("{}{}", i ? "," : "", range.get()[i]);
  return text;
}

} // namespace liftx::runtime
