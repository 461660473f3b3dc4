// liftx's lowered linear-algebra variants (stencils/linalg/mv.lift, tmv.lift, mm.lift) against
// CLBlast on the same device and the same buffers (seed 004's comparison with the vendor BLAS):
//
//   linalg_bench --device nvidia --size 8192 [--mm-size 4096] [--check-size 1024]
//                [--mm-check-size 128] [--batches 10] [--batch 10] VARIANT.lift...
//
// Each VARIANT.lift is a lowered variant of one of the programs (its definition's name: mv, tmv
// or mm), with the launch sidecar `liftx variants --out` writes beside it (VARIANT.json). Every
// variant is first verified against the reference interpreter of the high-level program
// (stencils/linalg/NAME.lift) on random inputs at --check-size (mm: --mm-check-size), with the
// tolerance every liftx run uses (exec::RunOptions, exec::reordering_tolerance), then run at --size
// (mm:
// --mm-size) on the buffers CLBlast reads, its result compared element by element with CLBlast's
// (relative 1e-3; the interpreter is too slow there). Both are timed the same way: batches of
// --batch launches back to back, waited for once, the median over --batches batches of the time per
// launch (CLBlast's Gemm may launch several kernels, so one kernel's profiling event would not time
// it). Bandwidth counts the matrix, the vector(s) and the result once; the float4-copy roofline is
// measured in the same process. Prints a table.
#include "codegen/launch.hpp"
#include "exec/run.hpp"
#include "ir/parse/parser.hpp"
#include "perfdb/record.hpp"
#include "runtime/build_cache.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "runtime/roofline.hpp"
#include "support/error.hpp"

#include <CLI/CLI.hpp>
#include <clblast.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace liftx;

namespace {

struct Options {
  std::string device = "gpu";
  int64_t size = 8192;
  int64_t mm_size = 4096;
  int64_t check_size = 1024;
  int64_t mm_check_size = 128;
  int batches = 10;
  int batch = 10;
  std::string linalg_dir = "stencils/linalg";
  std::vector<std::string> variants;
};

/// The operands of one operation at one size: A (n x n), the vector x or matrix B, and the
/// result, with CLBlast's result downloaded.
struct Operands {
  std::string op;
  int64_t n = 0;
  cl::Buffer a, b, result;
  size_t result_elements = 0;
  std::vector<float> blas_result;
  double bytes = 0; ///< moved once each: A, x or B, the result
  double flops = 0; ///< multiply-adds count 2
};

std::vector<float> random_floats(size_t count, uint64_t seed) {
  // Uniform in [-1, 1), never zero (as liftx draws inputs).
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(count);
  for (float& x : v) {
    do
      x = u(rng);
    while (x == 0.0f);
  }
  return v;
}

/// The median over `batches` of the time per launch of `batch` launches of `enqueue` waited for
/// once, in ms, after one untimed batch.
double time_batches(runtime::Device& device, const std::function<void()>& enqueue, int batches,
                    int batch) {
  auto run_batch = [&] {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i)
      enqueue();
    device.queue.finish();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
               .count() /
           batch;
  };
  run_batch();
  std::vector<double> samples;
  for (int i = 0; i < batches; ++i)
    samples.push_back(run_batch());
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

void check_blas(clblast::StatusCode status, const std::string& what) {
  LIFTX_USER_CHECK(status == clblast::StatusCode::kSuccess, "CLBlast {} failed with status {}",
                   what, static_cast<int>(status));
}

/// Enqueues CLBlast's computation of `o` (y = A x, y = A^T x, C = A B; row-major).
void enqueue_blas(runtime::Device& device, Operands& o) {
  cl_command_queue queue = device.queue();
  const size_t n = static_cast<size_t>(o.n);
  if (o.op == "mm") {
    check_blas(clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                    clblast::Transpose::kNo, n, n, n, 1.0f, o.a(), 0, n, o.b(), 0,
                                    n, 0.0f, o.result(), 0, n, &queue, nullptr),
               "Sgemm");
  } else {
    check_blas(clblast::Gemv<float>(
                   clblast::Layout::kRowMajor,
                   o.op == "tmv" ? clblast::Transpose::kYes : clblast::Transpose::kNo, n, n, 1.0f,
                   o.a(), 0, n, o.b(), 0, 1, 0.0f, o.result(), 0, 1, &queue, nullptr),
               o.op == "tmv" ? "Sgemv (transposed)" : "Sgemv");
  }
}

Operands make_operands(runtime::Device& device, const std::string& op, int64_t n) {
  Operands o;
  o.op = op;
  o.n = n;
  const size_t nn = static_cast<size_t>(n) * static_cast<size_t>(n);
  o.a = runtime::upload(device, random_floats(nn, 1));
  o.b = runtime::upload(device, random_floats(op == "mm" ? nn : static_cast<size_t>(n), 2));
  o.result_elements = op == "mm" ? nn : static_cast<size_t>(n);
  o.result = runtime::allocate(device, o.result_elements * sizeof(float));
  o.bytes = 4.0 * static_cast<double>(nn + (op == "mm" ? 2 * nn : 2 * static_cast<size_t>(n)));
  o.flops = 2.0 * static_cast<double>(nn) * (op == "mm" ? static_cast<double>(n) : 1.0);
  enqueue_blas(device, o);
  o.blas_result = runtime::download(device, o.result, o.result_elements);
  return o;
}

Sizes sizes_of(const std::string& op, int64_t n) {
  if (op == "mm")
    return {{"K", n}, {"M", n}, {"N", n}};
  return {{"M", n}, {"N", n}};
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  LIFTX_USER_CHECK(in, "cannot read {}", p.string());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Row {
  std::string what;
  double ms = 0;
  const Operands* o = nullptr;
  std::string note;
};

} // namespace

int main(int argc, char** argv) try {
  Options opt;
  CLI::App app("liftx linear-algebra variants against CLBlast on one device");
  app.add_option("--device", opt.device, "OpenCL device (default gpu)");
  app.add_option("--size", opt.size, "n of the n x n matrix-vector products (default 8192)");
  app.add_option("--mm-size", opt.mm_size, "n of the n x n x n matrix product (default 4096)");
  app.add_option("--check-size", opt.check_size,
                 "n at which each mv/tmv variant is verified against the interpreter (default "
                 "1024)");
  app.add_option("--mm-check-size", opt.mm_check_size,
                 "n at which each mm variant is verified against the interpreter (default 128)");
  app.add_option("--batches", opt.batches, "timed batches (default 10)");
  app.add_option("--batch", opt.batch, "launches per batch (default 10)");
  app.add_option("--linalg", opt.linalg_dir,
                 "folder of the high-level programs (default stencils/linalg)");
  app.add_option("variants", opt.variants, "lowered variants (.lift with a .json sidecar)");
  CLI11_PARSE(app, argc, argv);

  runtime::Device device = runtime::select_device(opt.device);
  const double copy_gbs = runtime::measure_copy_roofline(device, /*refresh=*/true);
  const double peak_gflops = exec::fp32_peak_gflop_per_s(device.profile).value_or(0);
  fmt::print("device {} ({}), float4 copy {:.0f} GB/s, fp32 peak (profile) {:.1f} TFLOP/s\n",
             device.profile.device_name, device.profile.key, copy_gbs, peak_gflops / 1000);

  std::map<std::string, Operands> operands;
  auto operands_for = [&](const std::string& op) -> Operands& {
    auto it = operands.find(op);
    if (it == operands.end())
      it = operands.emplace(op, make_operands(device, op, op == "mm" ? opt.mm_size : opt.size))
               .first;
    return it->second;
  };
  std::vector<Row> rows;
  for (const std::string op : {"mv", "tmv", "mm"}) {
    bool wanted = false;
    for (const std::string& v : opt.variants)
      wanted |= parse::parse_file(v).main().name == op;
    if (!wanted && op == "mm")
      continue;
    Operands& o = operands_for(op);
    rows.push_back({fmt::format("CLBlast {}", op == "mm"    ? "Sgemm"
                                              : op == "tmv" ? "Sgemv T"
                                                            : "Sgemv"),
                    time_batches(
                        device, [&] { enqueue_blas(device, o); }, opt.batches, opt.batch),
                    &o, "reference"});
  }

  for (const std::string& file : opt.variants) {
    const ir::Module module = parse::parse_file(file);
    const ir::Program& program = module.main();
    const std::string op = program.name;
    LIFTX_USER_CHECK(!(op != "mv" && op != "tmv" && op != "mm"),
                     "{}: the program is {}, not mv, tmv or mm", file, op);
    const ir::Module high_level =
        parse::parse_file((std::filesystem::path(opt.linalg_dir) / (op + ".lift")).string());
    std::filesystem::path sidecar = std::filesystem::path(file).replace_extension(".json");
    const std::string sidecar_text = read_text(sidecar);
    const exec::RunOptions launch = perfdb::read_launch_sidecar(sidecar_text, sidecar.string());
    const bool tied = nlohmann::json::parse(sidecar_text).value("tied", true);
    const std::string label = op + " " + std::filesystem::path(file).stem().string();

    // Verified against the interpreter at the check size (the launch the generator ties to it).
    exec::RunOptions check;
    check.reference = &high_level.main();
    check.time = false;
    check.roofline = false;
    const int64_t check_size = op == "mm" ? opt.mm_check_size : opt.check_size;
    try {
      exec::RunReport small = exec::run_program(device, program, sizes_of(op, check_size), check);
      if (small.status != runtime::Status::ok) {
        rows.push_back(
            {label, 0, nullptr,
             fmt::format("not timed: {} at n = {}", runtime::to_string(small.status), check_size)});
        continue;
      }
    } catch (const UserError& e) {
      rows.push_back({label, 0, nullptr, fmt::format("not timed: {}", e.what())});
      continue;
    }

    Operands& o = operands_for(op);
    const Sizes sizes = sizes_of(op, o.n);
    // The variant's own launch: its work-group size (a tied variant's global size follows the
    // sizes; a free one keeps its own too, and needs the size it was written for).
    codegen::LaunchRequest request;
    request.local = launch.local;
    if (!tied)
      request.global = launch.global;
    codegen::PreparedLaunch prepared =
        codegen::prepare_launch(program, sizes, request, device.profile.limits());
    runtime::BuildResult built =
        runtime::default_build_cache().build(device, prepared.kernel.source);
    runtime::Kernel kernel(built.program, prepared.kernel.name);
    std::vector<cl::Buffer> temporaries;
    for (const codegen::KernelArg& a : prepared.kernel.args) {
      switch (a.role) {
      case codegen::KernelArg::Role::Input:
        kernel.arg(a.input_index == 0 ? o.a : o.b);
        break;
      case codegen::KernelArg::Role::Output:
        kernel.arg(o.result);
        break;
      case codegen::KernelArg::Role::Local:
        kernel.arg(runtime::LocalMemory{std::max<size_t>(
            static_cast<size_t>(arith::evaluate(a.elements, sizes)) * codegen::scalar_bytes(a.kind),
            4)});
        break;
      case codegen::KernelArg::Role::Size:
        kernel.arg(static_cast<int32_t>(sizes.at(a.name)));
        break;
      case codegen::KernelArg::Role::Temporary:
        temporaries.push_back(runtime::allocate(
            device, std::max<size_t>(static_cast<size_t>(arith::evaluate(a.elements, sizes)) *
                                         codegen::scalar_bytes(a.kind),
                                     4)));
        kernel.arg(temporaries.back());
        break;
      default:
        throw UserError(
            fmt::format("{}: a kernel argument of an unexpected kind ({})", file, a.name));
      }
    }
    const auto [global, local] = exec::ndranges(prepared.launch);
    runtime::poison(device, o.result, o.result_elements * sizeof(float));
    runtime::run_kernel(device, kernel, global, local);
    const std::vector<float> got = runtime::download(device, o.result, o.result_elements);
    size_t wrong = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (!(std::fabs(got[i] - o.blas_result[i]) <=
            1e-3 * std::max(1.0f, std::fabs(o.blas_result[i]))))
        ++wrong;
    if (wrong) {
      rows.push_back(
          {label, 0, nullptr,
           fmt::format("WRONG: {} of {} elements differ from CLBlast", wrong, got.size())});
      continue;
    }
    const double ms = time_batches(
        device,
        [&] {
          runtime::check_cl(
              device.queue.enqueueNDRangeKernel(kernel.get(), cl::NullRange, global, local),
              "launching " + label);
        },
        opt.batches, opt.batch);
    rows.push_back({label, ms, &o,
                    fmt::format("{}; verified: interpreter at n = {}, CLBlast at n = {}",
                                codegen::describe(prepared.launch), check_size, o.n)});
  }

  fmt::print("\n| kernel | n | ms | GB/s | of copy | GFLOP/s | of fp32 peak | note |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---|\n");
  for (const Row& r : rows) {
    if (!r.o) {
      fmt::print("| {} | | | | | | | {} |\n", r.what, r.note);
      continue;
    }
    const double gbs = r.o->bytes / (r.ms * 1e6), gflops = r.o->flops / (r.ms * 1e6);
    fmt::print("| {} | {} | {:.4f} | {:.0f} | {:.1f}% | {:.0f} | {:.1f}% | {} |\n", r.what, r.o->n,
               r.ms, gbs, 100 * gbs / copy_gbs, gflops,
               peak_gflops > 0 ? 100 * gflops / peak_gflops : 0.0, r.note);
  }
  fmt::print("\n(times: median of {} batches of {} launches, per launch; batches={} batch={})\n",
             opt.batches, opt.batch, opt.batches, opt.batch);
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "linalg_bench: error: {}\n", e.what());
  return 1;
}
