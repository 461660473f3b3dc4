// Runs one OpenCL kernel through the CUDA driver, so that NVIDIA's CUDA tools (Nsight Compute's
// stall sampling and counters) can see it: they do not profile OpenCL. The kernel is built by the
// NVIDIA OpenCL driver, whose program binary is PTX; that PTX is loaded with cuModuleLoadData and
// launched with the same global and local sizes. Before anything is timed or profiled, one launch
// of each on the same random inputs must produce bit-identical buffers, so what the profiler sees
// is the kernel the OpenCL runtime runs.
//
// Device-only: it needs the CUDA driver's header and library, which the development machine lacks,
// so CMake does not build it; bench/gpu-stall-profile.sh compiles it on the GPU machine.
//
//   opencl_kernel_under_cuda FILE.cl KERNEL GX,GY[,GZ] LX,LY[,LZ] [--arg buf:float:N | int:V |
//       float:V]... [--prepend FILE.cl]... [--build-options S] [--build-option WORD]...
//       [--repeat N] [--ptx-out FILE] [--cuda-only]
//
// --prepend puts another source before FILE.cl (bench/handwritten/stream2d_stencils.cl before
// stream2d_lanes.cl, as stream_pipeline_bench does).
//
// --cuda-only skips the OpenCL launch, comparison and timing (for the profiler's replays after a
// checked run of the same command, and for compute-sanitizer, which sees only the CUDA launch).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct KernelArg {
  enum Kind { Buffer, Int, Float } kind;
  size_t elements = 0;
  int int_value = 0;
  float float_value = 0;
};

struct Options {
  std::string source_path, kernel, build_options, ptx_out;
  std::vector<std::string> prepended;
  std::vector<size_t> global, local;
  std::vector<KernelArg> args;
  int repeat = 20;
  bool cuda_only = false;
};

[[noreturn]] void fail(const std::string& message) {
  throw std::runtime_error(message);
}

void check_cl(cl_int status, const char* what) {
  if (status != CL_SUCCESS)
    fail(std::string(what) + " failed: OpenCL error " + std::to_string(status));
}

void check_cu(CUresult status, const char* what) {
  if (status != CUDA_SUCCESS) {
    const char* name = nullptr;
    cuGetErrorName(status, &name);
    fail(std::string(what) + " failed: " + (name ? name : "CUDA error"));
  }
}

/// `text` as a whole number, or a failure that names `what`.
long long parse_number(const std::string& text, const std::string& what) {
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::logic_error&) {
    used = 0;
  }
  if (used == 0 || used != text.size())
    fail(what + ": expected a whole number, got '" + text + "'");
  return value;
}

std::vector<size_t> parse_sizes(const std::string& text) {
  std::vector<size_t> sizes;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ',')) {
    const long long size = parse_number(part, "sizes " + text);
    if (size < 1)
      fail("sizes must be positive: " + text);
    sizes.push_back(static_cast<size_t>(size));
  }
  if (sizes.empty() || sizes.size() > 3)
    fail("sizes must be 1 to 3 numbers: " + text);
  return sizes;
}

KernelArg parse_arg(const std::string& text) {
  KernelArg arg{};
  if (text.rfind("buf:float:", 0) == 0) {
    arg.kind = KernelArg::Buffer;
    const long long elements = parse_number(text.substr(10), "--arg " + text);
    if (elements < 1)
      fail("--arg " + text + ": a buffer needs at least one element");
    arg.elements = static_cast<size_t>(elements);
  } else if (text.rfind("int:", 0) == 0) {
    arg.kind = KernelArg::Int;
    arg.int_value = static_cast<int>(parse_number(text.substr(4), "--arg " + text));
  } else if (text.rfind("float:", 0) == 0) {
    arg.kind = KernelArg::Float;
    try {
      arg.float_value = std::stof(text.substr(6));
    } catch (const std::logic_error&) {
      fail("--arg " + text + ": expected a number");
    }
  } else {
    fail("unknown --arg " + text + " (buf:float:N, int:V or float:V)");
  }
  return arg;
}

Options parse_options(int argc, char** argv) {
  if (argc < 5)
    fail("usage: opencl_kernel_under_cuda FILE.cl KERNEL GLOBAL LOCAL [options]");
  Options options;
  options.source_path = argv[1];
  options.kernel = argv[2];
  options.global = parse_sizes(argv[3]);
  options.local = parse_sizes(argv[4]);
  if (options.global.size() != options.local.size())
    fail("global and local differ in dimensions");
  for (int i = 5; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        fail(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--arg")
      options.args.push_back(parse_arg(value()));
    else if (flag == "--build-options")
      options.build_options = value();
    else if (flag == "--build-option")
      options.build_options += " " + value();
    else if (flag == "--prepend")
      options.prepended.push_back(value());
    else if (flag == "--repeat")
      options.repeat = static_cast<int>(parse_number(value(), "--repeat"));
    else if (flag == "--ptx-out")
      options.ptx_out = value();
    else if (flag == "--cuda-only")
      options.cuda_only = true;
    else
      fail("unknown option " + flag);
  }
  if (options.repeat < 1)
    fail("--repeat: at least one timed launch");
  for (size_t d = 0; d < options.global.size(); ++d)
    if (options.local[d] == 0 || options.global[d] % options.local[d] != 0)
      fail("global size is not a multiple of the local size in dimension " + std::to_string(d));
  return options;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    fail("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The OpenCL driver initialises %envreg registers (the global offset, among others) before its
// launches; a CUDA launch does not. Every launch here has a zero offset, so reads of them become
// zero. Which registers were replaced is printed, so that a kernel relying on another meaning
// shows.
std::string ptx_for_cuda_launch(const std::string& ptx) {
  static const std::regex envreg(R"(%envreg(\d+))");
  std::vector<std::string> seen;
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), envreg); it != std::sregex_iterator();
       ++it)
    if (std::find(seen.begin(), seen.end(), it->str()) == seen.end())
      seen.push_back(it->str());
  std::string names;
  for (const auto& name : seen)
    names += " " + name;
  std::printf("ptx: %zu bytes; environment registers read as zero:%s\n", ptx.size(),
              names.empty() ? " none" : names.c_str());
  return std::regex_replace(ptx, envreg, "0");
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

struct OpenClRun {
  std::string ptx;
  std::vector<std::vector<float>> buffers_after_one_launch;
  double median_ms = 0;
};

cl_device_id find_nvidia_device() {
  cl_uint platform_count = 0;
  check_cl(clGetPlatformIDs(0, nullptr, &platform_count), "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(platform_count);
  check_cl(clGetPlatformIDs(platform_count, platforms.data(), nullptr), "clGetPlatformIDs");
  for (auto platform : platforms) {
    char name[256] = {};
    clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name, name, nullptr);
    if (!std::strstr(name, "NVIDIA"))
      continue;
    cl_device_id device = nullptr;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device, nullptr) == CL_SUCCESS)
      return device;
  }
  fail("no NVIDIA OpenCL platform (register libnvidia-opencl.so with OCL_ICD_VENDORS)");
}

/// Builds the kernel with the OpenCL driver and takes its PTX; unless `build_only`, also launches
/// it once (keeping the buffers) and, with `time_it`, times it.
OpenClRun run_opencl(const Options& options, const std::string& source,
                     const std::vector<std::vector<float>>& inputs, bool build_only, bool time_it) {
  cl_int status = CL_SUCCESS;
  cl_device_id device = find_nvidia_device();
  cl_context context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  check_cl(status, "clCreateContext");
  cl_command_queue queue =
      clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &status);
  check_cl(status, "clCreateCommandQueue");
  const char* text = source.c_str();
  cl_program program = clCreateProgramWithSource(context, 1, &text, nullptr, &status);
  check_cl(status, "clCreateProgramWithSource");
  status = clBuildProgram(program, 1, &device, options.build_options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    size_t size = 0;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
    std::string log(size, '\0');
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
    fail("the OpenCL build failed:\n" + log);
  }
  OpenClRun run;
  size_t binary_size = 0;
  check_cl(
      clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof binary_size, &binary_size, nullptr),
      "CL_PROGRAM_BINARY_SIZES");
  run.ptx.assign(binary_size, '\0');
  char* binary = run.ptx.data();
  check_cl(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, nullptr),
           "CL_PROGRAM_BINARIES");
  run.ptx = run.ptx.c_str(); // drops the trailing NUL the driver counts in the size
  if (build_only) {
    clReleaseProgram(program);
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
    return run;
  }

  cl_kernel kernel = clCreateKernel(program, options.kernel.c_str(), &status);
  check_cl(status, "clCreateKernel");
  std::vector<cl_mem> buffers;
  for (size_t i = 0, b = 0; i < options.args.size(); ++i) {
    const auto& arg = options.args[i];
    if (arg.kind == KernelArg::Buffer) {
      cl_mem mem = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                  arg.elements * sizeof(float),
                                  const_cast<float*>(inputs[b++].data()), &status);
      check_cl(status, "clCreateBuffer");
      buffers.push_back(mem);
      check_cl(clSetKernelArg(kernel, i, sizeof mem, &mem), "clSetKernelArg");
    } else if (arg.kind == KernelArg::Int) {
      check_cl(clSetKernelArg(kernel, i, sizeof arg.int_value, &arg.int_value), "clSetKernelArg");
    } else {
      check_cl(clSetKernelArg(kernel, i, sizeof arg.float_value, &arg.float_value),
               "clSetKernelArg");
    }
  }
  cl_uint dims = static_cast<cl_uint>(options.global.size());
  auto launch = [&](cl_event* event) {
    check_cl(clEnqueueNDRangeKernel(queue, kernel, dims, nullptr, options.global.data(),
                                    options.local.data(), 0, nullptr, event),
             "clEnqueueNDRangeKernel");
  };
  launch(nullptr);
  check_cl(clFinish(queue), "clFinish");
  for (size_t b = 0; b < buffers.size(); ++b) {
    std::vector<float> host(inputs[b].size());
    check_cl(clEnqueueReadBuffer(queue, buffers[b], CL_TRUE, 0, host.size() * sizeof(float),
                                 host.data(), 0, nullptr, nullptr),
             "clEnqueueReadBuffer");
    run.buffers_after_one_launch.push_back(std::move(host));
  }
  if (time_it) {
    std::vector<double> times;
    for (int r = 0; r < options.repeat; ++r) {
      cl_event event = nullptr;
      launch(&event);
      check_cl(clWaitForEvents(1, &event), "clWaitForEvents");
      cl_ulong start = 0, end = 0;
      clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
      clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
      times.push_back((end - start) * 1e-6);
      clReleaseEvent(event);
    }
    run.median_ms = median(times);
  }
  for (auto mem : buffers)
    clReleaseMemObject(mem);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return run;
}

struct CudaRun {
  std::vector<std::vector<float>> buffers_after_one_launch;
  double median_ms = 0;
};

CudaRun run_cuda(const Options& options, const std::string& ptx,
                 const std::vector<std::vector<float>>& inputs) {
  check_cu(cuInit(0), "cuInit");
  CUdevice device;
  check_cu(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context;
  check_cu(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check_cu(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUmodule module;
  check_cu(cuModuleLoadData(&module, ptx.c_str()), "cuModuleLoadData");
  CUfunction function;
  check_cu(cuModuleGetFunction(&function, module, options.kernel.c_str()), "cuModuleGetFunction");
  int registers = 0, local_bytes = 0;
  cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function);
  cuFuncGetAttribute(&local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, function);
  std::printf("cuda: %d registers, %d bytes of local (spill) memory per thread\n", registers,
              local_bytes);

  std::vector<CUdeviceptr> buffers;
  std::vector<void*> params;
  params.reserve(options.args.size());
  buffers.reserve(inputs.size());
  for (const auto& arg : options.args) {
    if (arg.kind == KernelArg::Buffer) {
      CUdeviceptr pointer;
      size_t b = buffers.size();
      check_cu(cuMemAlloc(&pointer, arg.elements * sizeof(float)), "cuMemAlloc");
      std::printf("cuda: buffer %zu at 0x%llx, %zu bytes\n", buffers.size(),
                  static_cast<unsigned long long>(pointer), arg.elements * sizeof(float));
      check_cu(cuMemcpyHtoD(pointer, inputs[b].data(), arg.elements * sizeof(float)),
               "cuMemcpyHtoD");
      buffers.push_back(pointer);
      params.push_back(&buffers.back());
    } else if (arg.kind == KernelArg::Int) {
      params.push_back(const_cast<int*>(&arg.int_value));
    } else {
      params.push_back(const_cast<float*>(&arg.float_value));
    }
  }
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  for (size_t d = 0; d < options.global.size(); ++d) {
    block[d] = static_cast<unsigned>(options.local[d]);
    grid[d] = static_cast<unsigned>(options.global[d] / options.local[d]);
  }
  auto launch = [&] {
    check_cu(cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0,
                            nullptr, params.data(), nullptr),
             "cuLaunchKernel");
  };
  CudaRun run;
  launch();
  check_cu(cuCtxSynchronize(), "cuCtxSynchronize");
  for (size_t b = 0; b < buffers.size(); ++b) {
    std::vector<float> host(inputs[b].size());
    check_cu(cuMemcpyDtoH(host.data(), buffers[b], host.size() * sizeof(float)), "cuMemcpyDtoH");
    run.buffers_after_one_launch.push_back(std::move(host));
  }
  std::vector<double> times;
  CUevent start, end;
  check_cu(cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  check_cu(cuEventCreate(&end, CU_EVENT_DEFAULT), "cuEventCreate");
  for (int r = 0; r < options.repeat; ++r) {
    cuEventRecord(start, nullptr);
    launch();
    cuEventRecord(end, nullptr);
    check_cu(cuEventSynchronize(end), "cuEventSynchronize");
    float ms = 0;
    cuEventElapsedTime(&ms, start, end);
    times.push_back(ms);
  }
  run.median_ms = median(times);
  for (auto pointer : buffers)
    cuMemFree(pointer);
  cuModuleUnload(module);
  cuDevicePrimaryCtxRelease(device);
  return run;
}

} // namespace

int main(int argc, char** argv) {
  try {
    Options options = parse_options(argc, argv);
    std::string source;
    for (const auto& path : options.prepended)
      source += read_file(path);
    source += read_file(options.source_path);
    std::vector<std::vector<float>> inputs;
    std::mt19937 random(20261205);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (const auto& arg : options.args)
      if (arg.kind == KernelArg::Buffer) {
        std::vector<float> values(arg.elements);
        for (auto& v : values)
          v = uniform(random);
        inputs.push_back(std::move(values));
      }

    OpenClRun opencl = run_opencl(options, source, inputs, options.cuda_only, true);
    if (!options.ptx_out.empty())
      std::ofstream(options.ptx_out) << opencl.ptx;
    CudaRun cuda = run_cuda(options, ptx_for_cuda_launch(opencl.ptx), inputs);
    if (options.cuda_only) {
      std::printf("cuda launch: median %.4f ms of %d\n", cuda.median_ms, options.repeat);
      return 0;
    }
    size_t differing = 0, compared = 0;
    for (size_t b = 0; b < inputs.size(); ++b)
      for (size_t i = 0; i < inputs[b].size(); ++i, ++compared)
        if (std::memcmp(&opencl.buffers_after_one_launch[b][i],
                        &cuda.buffers_after_one_launch[b][i], sizeof(float)) != 0)
          ++differing;
    std::printf(
        "opencl launch: median %.4f ms of %d; cuda launch of its ptx: median %.4f ms of %d\n",
        opencl.median_ms, options.repeat, cuda.median_ms, options.repeat);
    std::printf("buffers after one launch each: %zu of %zu elements differ\n", differing, compared);
    return differing == 0 ? 0 : 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "opencl_kernel_under_cuda: error: %s\n", error.what());
    return 1;
  }
}
