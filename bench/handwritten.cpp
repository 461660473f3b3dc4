#include "bench/handwritten.hpp"

#include "exec/verify.hpp"
#include "ir/parse/parser.hpp"
#include "runtime/build_cache.hpp"
#include "runtime/cache_dir.hpp"
#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace liftx::bench {

namespace {

int64_t round_up(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

std::vector<float> to_floats(const interp::HostArray& array) {
  return std::vector<float>(array.data.begin(), array.data.end());
}

} // namespace

namespace {

struct StencilEntry {
  std::string name;
  int rank;
};

const std::vector<StencilEntry>& stencil_entries() {
  // The 2D stencils of stencils/*.lift, then the 3D suite of stencils/3d/*.lift.
  static const std::vector<StencilEntry> entries = {
      {"gaussian", 2}, {"gradient", 2}, {"hotspot2d", 2}, {"jacobi2d5pt", 2}, {"jacobi2d9pt", 2},
      {"srad1", 2},    {"srad2", 2},    {"stencil2d", 2}, {"heat3d", 3},      {"j3d7pt", 3},
      {"j3d13pt", 3},  {"j3d27pt", 3},  {"poisson3d", 3}, {"hotspot3d", 3}};
  return entries;
}

const StencilEntry& stencil_entry(const std::string& stencil) {
  for (const StencilEntry& e : stencil_entries())
    if (e.name == stencil)
      return e;
  throw UserError(fmt::format("no hand-written kernel for stencil '{}' (known: {})", stencil,
                              fmt::join(handwritten_stencils(), ", ")));
}

} // namespace

const std::vector<std::string>& handwritten_stencils() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const StencilEntry& e : stencil_entries())
      all.push_back(e.name);
    return all;
  }();
  return names;
}

std::vector<std::string> handwritten_stencils(int rank) {
  std::vector<std::string> names;
  for (const StencilEntry& e : stencil_entries())
    if (e.rank == rank)
      names.push_back(e.name);
  return names;
}

int stencil_rank(const std::string& stencil) {
  return stencil_entry(stencil).rank;
}

std::filesystem::path stencil_file(const std::filesystem::path& source_dir,
                                   const std::string& stencil) {
  const std::filesystem::path dir = source_dir / "stencils";
  return (stencil_rank(stencil) == 3 ? dir / "3d" : dir) / (stencil + ".lift");
}

std::vector<HandwrittenKernel> handwritten_kernels(const std::filesystem::path& source_dir,
                                                   const std::string& stencil,
                                                   const std::vector<int>& window_rows) {
  stencil_entry(stencil); // UserError for an unknown stencil
  const std::filesystem::path dir = source_dir / "bench" / "handwritten";
  std::vector<HandwrittenKernel> kernels;
  kernels.push_back(HandwrittenKernel{stencil, "handwritten naive", dir / (stencil + ".cl"),
                                      stencil + "_naive", "", 1, 1});
  if (stencil == "jacobi2d5pt") {
    for (int rows : window_rows) {
      LIFTX_USER_CHECK(rows >= 1, "window rows must be at least 1, got {}", rows);
      kernels.push_back(
          HandwrittenKernel{stencil, fmt::format("handwritten float4-window rows={}", rows),
                            dir / "jacobi2d5pt_float4_window.cl", "jacobi2d5pt_float4_window",
                            fmt::format("-DROWS={}", rows), 4, rows});
    }
  }
  return kernels;
}

double StencilCase::bytes_moved() const {
  return (static_cast<double>(inputs.size()) + 1) * static_cast<double>(elements()) * sizeof(float);
}

std::string StencilCase::shape_text() const {
  return fmt::format("{}", fmt::join(shape, "x"));
}

namespace {

/// The size variables of a grid of `rank` dimensions, outermost first, as the .lift files name
/// them.
std::vector<std::string> size_names(size_t rank) {
  return rank == 3 ? std::vector<std::string>{"M", "N", "O"} : std::vector<std::string>{"M", "N"};
}

/// "[[float]N]M" or "[[[float]O]N]M", for messages.
std::string grid_type_text(size_t rank) {
  return rank == 3 ? "[[[float]O]N]M" : "[[float]N]M";
}

} // namespace

StencilCase load_stencil_case(const std::filesystem::path& lift_file,
                              const std::vector<int64_t>& shape, uint64_t seed) {
  LIFTX_USER_CHECK(!(shape.size() != 2 && shape.size() != 3),
                   "a stencil case has 2 or 3 extents, got {}", shape.size());
  StencilCase c;
  c.stencil = lift_file.stem().string();
  c.module = parse::parse_file(lift_file.string());
  c.shape = shape;
  c.seed = seed;
  const std::vector<std::string> names = size_names(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    c.sizes[names[d]] = shape[d];
  const ir::Program& program = c.program();
  interp::check_sizes(program, c.sizes);
  auto is_float_grid = [&](const ir::Type& t) {
    return ir::array_base(t) == ir::Type::float_() && interp::concrete_shape(t, c.sizes) == shape;
  };
  const std::string grid = grid_type_text(shape.size());
  for (const ir::Expr& p : program.params)
    LIFTX_USER_CHECK(is_float_grid(p.type()), "{}: every parameter of {} must be a {} grid",
                     lift_file.string(), program.name, grid);
  LIFTX_USER_CHECK(is_float_grid(program.result_type()), "{}: the result of {} must be a {} grid",
                   lift_file.string(), program.name, grid);

  c.inputs = exec::draw_inputs(program, c.sizes, seed);
  exec::RunOptions reference_options;
  reference_options.seed = seed;
  reference_options.reference = &program;
  c.reference = exec::reference_result(program, reference_options, c.inputs, c.sizes);
  return c;
}

StencilCase load_stencil_case(const std::filesystem::path& lift_file, int64_t rows, int64_t columns,
                              uint64_t seed) {
  return load_stencil_case(lift_file, std::vector<int64_t>{rows, columns}, seed);
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
  // The same element check as every liftx variant's (exec/verify.hpp).
  const exec::ElementCheck check = exec::check_elements(
      ir::ScalarKind::Float, reinterpret_cast<const unsigned char*>(output.data()), 0,
      output.size(), want.data.data(), 1,
      {tolerance, exec::output_floor(want.data.data(), want.data.size(), 1)});
  v.mismatches = check.mismatches;
  v.unwritten = check.unwritten;
  v.max_abs_error = check.max_abs_error;
  if (check.mismatches > 0) {
    const double expected = want.data[check.first_mismatch];
    v.first_mismatch = check.first_unwritten
                           ? fmt::format("element {} was never written (interpreter {:.9g})",
                                         check.first_mismatch, expected)
                           : fmt::format("element {}: kernel {:.9g}, interpreter {:.9g}",
                                         check.first_mismatch, check.first_got, expected);
  }
  v.passed = v.mismatches == 0;
  return v;
}

namespace {

/// The NDRange of `kernel` over the case's grid: its work-item counts along x, y (and z), each
/// rounded up to a multiple of the work-group size when one is given. Sets report.global/local.
void plan_launch(const HandwrittenKernel& kernel, const StencilCase& stencil,
                 const HandwrittenOptions& options, HandwrittenReport& report) {
  report.dims = stencil.rank();
  LIFTX_USER_CHECK(
      !(!options.local.empty() && static_cast<int>(options.local.size()) != report.dims),
      "a hand-written kernel of a {}D stencil has a local size of {} "
      "values, got {}",
      report.dims, report.dims, options.local.size());
  const std::array<int64_t, 3> items{
      (stencil.columns() + kernel.columns_per_item - 1) / kernel.columns_per_item,
      (stencil.rows() + kernel.rows_per_item - 1) / kernel.rows_per_item, stencil.planes()};
  for (int d = 0; d < report.dims; ++d) {
    report.global[d] = items[d];
    if (!options.local.empty()) {
      report.local[d] = options.local[d];
      report.global[d] = round_up(items[d], report.local[d]);
    }
  }
}

cl::NDRange nd_range(const std::array<int64_t, 3>& values, int dims) {
  auto at = [&](int d) { return static_cast<size_t>(values[d]); };
  return dims == 3 ? cl::NDRange(at(0), at(1), at(2)) : cl::NDRange(at(0), at(1));
}

} // namespace

HandwrittenReport run_handwritten(runtime::Device& device, const HandwrittenKernel& kernel,
                                  const StencilCase& stencil, const HandwrittenOptions& options) {
  std::optional<std::string> source = runtime::read_file_bytes(kernel.file);
  LIFTX_USER_CHECK(source, "cannot read {}", kernel.file.string());

  HandwrittenReport report;
  report.bytes_moved = stencil.bytes_moved();
  plan_launch(kernel, stencil, options, report);
  const cl::NDRange global = nd_range(report.global, report.dims);
  const cl::NDRange local = options.local.empty() ? runtime::runtime_chooses_local()
                                                  : nd_range(report.local, report.dims);
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
    const size_t elements = static_cast<size_t>(stencil.elements());
    cl::Buffer output = runtime::allocate(device, elements * sizeof(float));
    k.arg(output);
    for (int64_t extent : stencil.shape) // M, N (, O)
      k.arg(static_cast<int32_t>(extent));

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
