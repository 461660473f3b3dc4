#include "bench/handwritten.hpp"

#include "codegen/runtime/build_cache.hpp"
#include "codegen/runtime/cache_dir.hpp"
#include "ir/parse/parser.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace liftx::bench {

namespace {

int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::vector<float> to_floats(const interp::HostArray& array) {
  return std::vector<float>(array.data.begin(), array.data.end());
}

} // namespace

const std::vector<std::string>& handwritten_stencils() {
  static const std::vector<std::string> names = {"gaussian",    "gradient",    "hotspot2d",
                                                 "jacobi2d5pt", "jacobi2d9pt", "srad1",
                                                 "srad2",       "stencil2d"};
  return names;
}

std::vector<HandwrittenKernel> handwritten_kernels(const std::filesystem::path& source_dir,
                                                   const std::string& stencil,
                                                   const std::vector<int>& window_rows) {
  const auto& known = handwritten_stencils();
  if (std::find(known.begin(), known.end(), stencil) == known.end())
    throw UserError(fmt::format("no hand-written kernel for stencil '{}' (known: {})", stencil,
                                fmt::join(known, ", ")));
  const std::filesystem::path dir = source_dir / "bench" / "handwritten";
  std::vector<HandwrittenKernel> kernels;
  kernels.push_back(HandwrittenKernel{stencil, "handwritten naive", dir / (stencil + ".cl"),
                                      stencil + "_naive", "", 1, 1});
  if (stencil == "jacobi2d5pt") {
    for (int rows : window_rows) {
      if (rows < 1)
        throw UserError(fmt::format("window rows must be at least 1, got {}", rows));
      kernels.push_back(
          HandwrittenKernel{stencil, fmt::format("handwritten float4-window rows={}", rows),
                            dir / "jacobi2d5pt_float4_window.cl", "jacobi2d5pt_float4_window",
                            fmt::format("-DROWS={}", rows), 4, rows});
    }
  }
  return kernels;
}

double StencilCase::bytes_moved() const {
  double elements = static_cast<double>(rows) * static_cast<double>(columns);
  return (static_cast<double>(inputs.size()) + 1) * elements * sizeof(float);
}

StencilCase load_stencil_case(const std::filesystem::path& lift_file, int64_t rows, int64_t columns,
                              uint64_t seed) {
  StencilCase c;
  c.stencil = lift_file.stem().string();
  c.module = parse::parse_file(lift_file.string());
  c.rows = rows;
  c.columns = columns;
  c.seed = seed;
  c.sizes = {{"M", rows}, {"N", columns}};
  const ir::Program& program = c.program();
  interp::check_sizes(program, c.sizes);
  const std::vector<int64_t> grid{rows, columns};
  auto is_float_grid = [&](const ir::Type& t) {
    return ir::array_base(t) == ir::Type::float_() && interp::concrete_shape(t, c.sizes) == grid;
  };
  for (const ir::Expr& p : program.params)
    if (!is_float_grid(p.type()))
      throw UserError(fmt::format("{}: every parameter of {} must be a [[float]N]M grid",
                                  lift_file.string(), program.name));
  if (!is_float_grid(program.result_type()))
    throw UserError(fmt::format("{}: the result of {} must be a [[float]N]M grid",
                                lift_file.string(), program.name));

  c.inputs = exec::draw_inputs(program, c.sizes, seed);
  exec::RunOptions reference_options;
  reference_options.seed = seed;
  reference_options.reference = &program;
  c.reference = exec::reference_result(program, reference_options, c.inputs, c.sizes);
  return c;
}

exec::Verification verify_output(const std::vector<float>& output, const interp::HostArray& want,
                                 double tolerance) {
  exec::Verification v;
  v.checked = true;
  v.elements = static_cast<int64_t>(want.data.size());
  if (output.size() != want.data.size()) {
    v.mismatches = v.elements;
    v.first_mismatch = fmt::format("the kernel produced {} elements, the interpreter {}",
                                   output.size(), want.data.size());
    return v;
  }
  for (size_t i = 0; i < output.size(); ++i) {
    const bool poisoned = runtime::is_poison(output[i]);
    const double got = output[i];
    const double expected = want.data[i];
    const bool both_nan = std::isnan(got) && std::isnan(expected);
    const bool same = (both_nan && !poisoned) ||
                      std::fabs(got - expected) <= tolerance * std::max(1.0, std::fabs(expected));
    if (poisoned)
      ++v.unwritten;
    if (!std::isnan(got) && !std::isnan(expected))
      v.max_abs_error = std::max(v.max_abs_error, std::fabs(got - expected));
    if (!same) {
      if (v.mismatches == 0)
        v.first_mismatch =
            poisoned
                ? fmt::format("element {} was never written (interpreter {:.9g})", i, expected)
                : fmt::format("element {}: kernel {:.9g}, interpreter {:.9g}", i, got, expected);
      ++v.mismatches;
    }
  }
  v.passed = v.mismatches == 0;
  return v;
}

HandwrittenReport run_handwritten(runtime::Device& device, const HandwrittenKernel& kernel,
                                  const StencilCase& stencil, const HandwrittenOptions& options) {
  std::optional<std::string> source = runtime::read_file_bytes(kernel.file);
  if (!source)
    throw UserError(fmt::format("cannot read {}", kernel.file.string()));
  if (!options.local.empty() && options.local.size() != 2)
    throw UserError(fmt::format("a hand-written kernel's local size has 2 values, got {}",
                                options.local.size()));

  HandwrittenReport report;
  report.bytes_moved = stencil.bytes_moved();
  const int64_t items_x = (stencil.columns + kernel.columns_per_item - 1) / kernel.columns_per_item;
  const int64_t items_y = (stencil.rows + kernel.rows_per_item - 1) / kernel.rows_per_item;
  report.global = {items_x, items_y};
  if (!options.local.empty()) {
    report.local = {options.local[0], options.local[1]};
    report.global = {round_up(items_x, report.local[0]), round_up(items_y, report.local[1])};
  }
  const cl::NDRange global(static_cast<size_t>(report.global[0]),
                           static_cast<size_t>(report.global[1]));
  const cl::NDRange local =
      options.local.empty()
          ? runtime::runtime_chooses_local()
          : cl::NDRange(static_cast<size_t>(report.local[0]), static_cast<size_t>(report.local[1]));
  try {
    runtime::BuildResult built =
        runtime::default_build_cache().build(device, *source, kernel.build_options);
    report.build_ms = built.build_ms;
    runtime::Kernel k(built.program, kernel.kernel_name);
    std::vector<cl::Buffer> inputs;
    for (const interp::HostArray& input : stencil.inputs) {
      inputs.push_back(runtime::upload(device, to_floats(input), CL_MEM_READ_ONLY));
      k.arg(inputs.back());
    }
    const size_t elements = static_cast<size_t>(stencil.rows * stencil.columns);
    cl::Buffer output = runtime::allocate(device, elements * sizeof(float));
    k.arg(output);
    k.arg(static_cast<int32_t>(stencil.rows)).arg(static_cast<int32_t>(stencil.columns));

    runtime::poison(device, output, elements * sizeof(float));
    runtime::run_kernel(device, k, global, local);
    report.verification = verify_output(runtime::download(device, output, elements),
                                        stencil.reference, options.tolerance);
    if (!report.verification.passed) {
      report.status = runtime::Status::wrong_result;
      report.message = exec::describe_mismatches(report.verification);
      return report;
    }
    if (options.time) {
      report.timing =
          runtime::time_kernel(device, k, global, local, options.warmup, options.repeat);
      report.gb_per_s = report.bytes_moved / (report.timing->median_ms * 1e6);
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

} // namespace liftx::bench
