#pragma once
/// Hand-written OpenCL kernels for the stencils of stencils/*.lift (bench/handwritten/*.cl), run
/// and verified the same way liftx runs its generated kernels: random inputs drawn as
/// exec::run_program draws them, every output element compared with the reference interpreter's
/// result for the high-level stencil, timing by profiling events. Shared by stencil_roofline_bench
/// and its test, so that the test checks exactly what the bench verifies.
#include "codegen/runtime/device.hpp"
#include "codegen/runtime/launch.hpp"
#include "codegen/runtime/status.hpp"
#include "exec/run.hpp"
#include "ir/expr.hpp"
#include "ir/interp/interp.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace liftx::bench {

/// One hand-written kernel of one stencil. Its parameters are the stencil's inputs in the .lift
/// parameter order, then the output, then `int M, int N` (rows, columns), as liftx's kernels.
struct HandwrittenKernel {
  std::string stencil;        ///< e.g. "jacobi2d5pt"
  std::string label;          ///< e.g. "handwritten naive", "handwritten float4-window rows=4"
  std::filesystem::path file; ///< the .cl source
  std::string kernel_name;
  std::string build_options;    ///< e.g. "-DROWS=4"
  int64_t columns_per_item = 1; ///< outputs along a row per work-item
  int64_t rows_per_item = 1;    ///< rows per work-item
};

/// The stencils that have hand-written kernels (those of stencils/*.lift), in a fixed order.
const std::vector<std::string>& handwritten_stencils();

/// The hand-written kernels of `stencil` under `source_dir`/bench/handwritten: the naive one
/// (one work-item per output point) and, for jacobi2d5pt, one float4 sliding-window kernel per
/// entry of `window_rows` (rows per work-item, each >= 1). UserError for an unknown stencil.
std::vector<HandwrittenKernel> handwritten_kernels(const std::filesystem::path& source_dir,
                                                   const std::string& stencil,
                                                   const std::vector<int>& window_rows = {4});

/// A stencil's high-level program at M = rows, N = columns, with random inputs drawn exactly as
/// exec::run_program draws them for `seed` (so liftx variants of the stencil run on the same
/// data), and the reference interpreter's result (exec::reference_result: cached on disk, shared
/// with `liftx run --reference`).
struct StencilCase {
  std::string stencil;
  ir::Module module;
  interp::Sizes sizes;
  int64_t rows = 0;
  int64_t columns = 0;
  uint64_t seed = 1;
  std::vector<interp::HostArray> inputs;
  interp::HostArray reference;

  const ir::Program& program() const { return module.main(); }
  /// Each input read once and the output written once, in bytes (as exec counts bytes_moved).
  double bytes_moved() const;
};

/// Loads `lift_file` (its main definition must have sizes M and N only), draws its inputs and
/// computes (or loads) the reference result. UserError for an unreadable or unsuitable program.
StencilCase load_stencil_case(const std::filesystem::path& lift_file, int64_t rows, int64_t columns,
                              uint64_t seed = 1);

/// Compares a kernel's float output with the interpreter's, element by element: a match is
/// |kernel - interpreter| <= tolerance * max(1, |interpreter|), or both NaN where the kernel wrote
/// the NaN; elements holding the poison pattern count as unwritten (and as mismatches).
exec::Verification verify_output(const std::vector<float>& output, const interp::HostArray& want,
                                 double tolerance = 1e-4);

struct HandwrittenOptions {
  /// Work-group size (x, y); empty lets the OpenCL runtime choose (then the global size is the
  /// exact work-item count, otherwise it is rounded up to a multiple of the work-group size).
  std::vector<int64_t> local;
  bool time = true;
  int warmup = 3;
  int repeat = 10;
  double tolerance = 1e-4;
};

struct HandwrittenReport {
  runtime::Status status = runtime::Status::ok;
  std::string message; ///< the build log, the OpenCL error, or the first mismatch
  std::array<int64_t, 2> global{0, 0};
  std::array<int64_t, 2> local{0, 0}; ///< 0 = chosen by the OpenCL runtime
  double build_ms = 0;
  exec::Verification verification;
  std::optional<runtime::Timing> timing;
  double bytes_moved = 0;
  std::optional<double> gb_per_s;
};

/// Builds the kernel, runs it once on the case's inputs with a poisoned output and verifies every
/// element against the reference, then (if `options.time` and it passed) times it: warm-ups, then
/// `repeat` runs by profiling events. Build and OpenCL failures and wrong results are reported in
/// the status, never thrown; an unreadable .cl file is a UserError.
HandwrittenReport run_handwritten(runtime::Device& device, const HandwrittenKernel& kernel,
                                  const StencilCase& stencil, const HandwrittenOptions& options);

} // namespace liftx::bench
