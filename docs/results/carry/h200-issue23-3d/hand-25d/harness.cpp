// Scratch harness: runs j3d7pt_stream.cl, checks two clamped steps against a CPU reference, times
// it.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>
#define CK(x)                                                                                      \
  do {                                                                                             \
    cl_int e_ = (x);                                                                               \
    if (e_) {                                                                                      \
      std::fprintf(stderr, "%s: %d\n", #x, e_);                                                    \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)
static float j7(float c, float f, float b, float n, float s, float w, float e) {
  return 0.161f * e + 0.162f * w + 0.163f * s + 0.164f * n + 0.165f * b + 0.166f * f - 1.67f * c;
}
static void step(const std::vector<float>& a, std::vector<float>& o, int M, int N, int O) {
  auto at = [&](int z, int y, int x) {
    z = std::clamp(z, 0, M - 1);
    y = std::clamp(y, 0, N - 1);
    x = std::clamp(x, 0, O - 1);
    return a[(size_t(z) * N + y) * O + x];
  };
#pragma omp parallel for
  for (int z = 0; z < M; ++z)
    for (int y = 0; y < N; ++y)
      for (int x = 0; x < O; ++x)
        o[(size_t(z) * N + y) * O + x] =
            j7(at(z, y, x), at(z - 1, y, x), at(z + 1, y, x), at(z, y - 1, x), at(z, y + 1, x),
               at(z, y, x - 1), at(z, y, x + 1));
}
int main(int argc, char** argv) {
  // harness DEVICE_SUBSTR M N O TX TY BX BY ZC STAGE REPEAT
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::string want = argv[1];
  int M = atoi(argv[2]), N = atoi(argv[3]), O = atoi(argv[4]);
  int REP = atoi(argv[5]);
  cl_uint np;
  CK(clGetPlatformIDs(0, nullptr, &np));
  std::vector<cl_platform_id> ps(np);
  CK(clGetPlatformIDs(np, ps.data(), nullptr));
  cl_device_id dev = nullptr;
  for (auto p : ps) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) || !nd)
      continue;
    std::vector<cl_device_id> ds(nd);
    clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ds.data(), nullptr);
    for (auto d : ds) {
      char name[256];
      clGetDeviceInfo(d, CL_DEVICE_NAME, 256, name, nullptr);
      std::string s = name;
      if (!dev && s.find(want) != std::string::npos)
        dev = d;
    }
  }
  if (!dev) {
    std::fprintf(stderr, "no device\n");
    return 1;
  }
  cl_int e;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &e);
  CK(e);
  cl_command_queue qu = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e);
  CK(e);
  const char* file = getenv("KFILE") ? getenv("KFILE") : "j3d7pt_stream.cl";
  std::ifstream f(file);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string src = ss.str();
  const char* sp = src.c_str();
  size_t n = size_t(M) * N * O;
  std::vector<float> a(n), r1(n), r2(n), got(n);
  std::mt19937 g(7);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& v : a)
    v = u(g);
  step(a, r1, M, N, O);
  step(r1, r2, M, N, O);
  cl_mem bi = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, a.data(), &e);
  CK(e);
  cl_mem bo = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * 4, nullptr, &e);
  CK(e);
  int status = 0;
  for (int ai = 6; ai + 5 < argc; ai += 6) {
    int TX = atoi(argv[ai]), TY = atoi(argv[ai + 1]), BX = atoi(argv[ai + 2]),
        BY = atoi(argv[ai + 3]), ZC = atoi(argv[ai + 4]), STAGE = atoi(argv[ai + 5]);
    cl_program pr = clCreateProgramWithSource(ctx, 1, &sp, nullptr, &e);
    CK(e);
    char opts[256];
    std::snprintf(opts, 256, "-DTX=%d -DTY=%d -DBX=%d -DBY=%d -DZC=%d -DSTAGE=%d -DPREFETCH=%d", TX,
                  TY, BX, BY, ZC, STAGE, STAGE);
    if (clBuildProgram(pr, 1, &dev, opts, nullptr, nullptr)) {
      char log[20000];
      clGetProgramBuildInfo(pr, dev, CL_PROGRAM_BUILD_LOG, 20000, log, nullptr);
      std::fprintf(stderr, "%s\n", log);
      continue;
    }
    cl_kernel k = clCreateKernel(pr, getenv("KNAME") ? getenv("KNAME") : "j3d7pt_stream", &e);
    CK(e);
    CK(clSetKernelArg(k, 0, sizeof bi, &bi));
    CK(clSetKernelArg(k, 1, sizeof bo, &bo));
    CK(clSetKernelArg(k, 2, 4, &M));
    CK(clSetKernelArg(k, 3, 4, &N));
    CK(clSetKernelArg(k, 4, 4, &O));
    if (getenv("KNAME")) {
      TX = BX - 4;
      TY = BY - 4;
    }
    size_t gl[3] = {size_t((O + TX - 1) / TX * BX), size_t((N + TY - 1) / TY * BY),
                    size_t((M + ZC - 1) / ZC)};
    size_t lo[3] = {size_t(BX), size_t(BY), 1};
    CK(clEnqueueNDRangeKernel(qu, k, 3, nullptr, gl, lo, 0, nullptr, nullptr));
    CK(clEnqueueReadBuffer(qu, bo, CL_TRUE, 0, n * 4, got.data(), 0, nullptr, nullptr));
    double worst = 0;
    size_t bad = 0;
    for (size_t i = 0; i < n; ++i) {
      double d = std::fabs(got[i] - r2[i]) / (1e-3 + std::fabs(r2[i]));
      worst = std::max(worst, d);
      if (d > 1e-4)
        ++bad;
    }
    std::vector<double> ts;
    for (int it = 0; it < REP + 3; ++it) {
      cl_event ev;
      CK(clEnqueueNDRangeKernel(qu, k, 3, nullptr, gl, lo, 0, nullptr, &ev));
      CK(clWaitForEvents(1, &ev));
      cl_ulong t0, t1;
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, 8, &t0, nullptr);
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, 8, &t1, nullptr);
      clReleaseEvent(ev);
      if (it >= 3)
        ts.push_back((t1 - t0) * 1e-6);
    }
    std::sort(ts.begin(), ts.end());
    std::printf("%s M=%d N=%d O=%d tile %dx%d threads %dx%d zc %d stage %d: bad %zu worst %.2e "
                "median %.4f ms/launch %.4f ms/step\n",
                opts, M, N, O, TY, TX, BY, BX, ZC, STAGE, bad, worst, ts[ts.size() / 2],
                ts[ts.size() / 2] / 2);
    if (bad)
      status = 2;
    clReleaseKernel(k);
    clReleaseProgram(pr);
  }
  return status;
}
