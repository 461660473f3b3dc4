#pragma once
/// Hand-written OpenCL kernels for the stencils of stencils/*.lift (2D) and stencils/3d/*.lift (3D)
/// (bench/handwritten/*.cl), run
/// and verified the same way liftx runs its generated kernels: random inputs drawn as
/// exec::run_program draws them, every output element compared with the reference interpreter's
/// result for the high-level stencil, timing by profiling events. Shared by stencil_roofline_bench
/// and its test, so that the test checks exactly what the bench verifies.
#include "exec/run.hpp"
#include "ir/expr.hpp"
#include "ir/interp/interp.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "runtime/status.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace liftx::bench {

/// One hand-written kernel of one stencil. Its parameters are the stencil's inputs in the .lift
/// parameter order, then the output, then the sizes as liftx's kernels take them: `int M, int N`
/// (rows, columns) for a 2D stencil, `int M, int N, int O` (planes z, rows y, columns x) for a 3D
/// one. Its NDRange is (x, y) or (x, y, z): dimension 0 runs along a row.
struct HandwrittenKernel {
  std::string stencil;        ///< e.g. "jacobi2d5pt"
  std::string label;          ///< e.g. "handwritten naive", "handwritten float4-window rows=4"
  std::filesystem::path file; ///< the .cl source
  std::string kernel_name;
  std::string build_options;    ///< e.g. "-DROWS=4"
  int64_t columns_per_item = 1; ///< outputs along a row per work-item
  int64_t rows_per_item = 1;    ///< rows per work-item
};

/// The stencils that have hand-written kernels, in a fixed order: the 2D ones (stencils/*.lift),
/// then the 3D ones (stencils/3d/*.lift).
const std::vector<std::string>& handwritten_stencils();

/// Those of them over grids of `rank` dimensions (2 or 3), in the same order.
std::vector<std::string> handwritten_stencils(int rank);

/// The number of dimensions of a hand-written stencil's grids (2 or 3). UserError for an unknown
/// stencil.
int stencil_rank(const std::string& stencil);

/// The high-level program of a hand-written stencil under `source_dir`: stencils/<stencil>.lift
/// in 2D, stencils/3d/<stencil>.lift in 3D. UserError for an unknown stencil.
std::filesystem::path stencil_file(const std::filesystem::path& source_dir,
                                   const std::string& stencil);

/// The hand-written kernels of `stencil` under `source_dir`/bench/handwritten: the naive one
/// (one work-item per output point) and, for jacobi2d5pt, one float4 sliding-window kernel per
/// entry of `window_rows` (rows per work-item, each >= 1). UserError for an unknown stencil.
std::vector<HandwrittenKernel> handwritten_kernels(const std::filesystem::path& source_dir,
                                                   const std::string& stencil,
                                                   const std::vector<int>& window_rows = {4});

/// A stencil's high-level program at the sizes of `shape` (M = rows, N = columns in 2D; M = planes,
/// N = rows, O = columns in 3D), with random inputs drawn exactly as
/// exec::run_program draws them for `seed` (so liftx variants of the stencil run on the same
/// data), and the reference interpreter's result (exec::reference_result: cached on disk, shared
/// with `liftx run --reference`).
struct StencilCase {
  std::string stencil;
  ir::Module module;
  Sizes sizes;
  std::vector<int64_t> shape; ///< the grid's extents, outermost first: {M, N} or {M, N, O}
  uint64_t seed = 1;
  std::vector<interp::HostArray> inputs;
  interp::HostArray reference;

  const ir::Program& program() const { return module.main(); }
  int rank() const { return static_cast<int>(shape.size()); }
  int64_t columns() const { return shape.back(); }                   ///< along x, innermost
  int64_t rows() const { return shape[shape.size() - 2]; }           ///< along y
  int64_t planes() const { return rank() == 3 ? shape.front() : 1; } ///< along z
  int64_t elements() const { return planes() * rows() * columns(); }
  std::string shape_text() const; ///< "24x40", "12x20x28"
  /// Each input read once and the output written once, in bytes (as exec counts bytes_moved).
  double bytes_moved() const;
};

/// Loads `lift_file`, draws its inputs and computes (or loads) the reference result. `shape` has
/// two extents (M, N: the main definition must have sizes M and N only) or three (M, N, O: sizes
/// M, N and O only), and every parameter and the result must be float grids of that shape.
/// UserError for an unreadable or unsuitable program.
StencilCase load_stencil_case(const std::filesystem::path& lift_file,
                              const std::vector<int64_t>& shape, uint64_t seed = 1);

/// The 2D case: M = rows, N = columns.
StencilCase load_stencil_case(const std::filesystem::path& lift_file, int64_t rows, int64_t columns,
                              uint64_t seed = 1);

/// Compares a kernel's float output with the interpreter's with exec::check_elements, the check of
/// every liftx variant: a match is |kernel - interpreter| <= tolerance * max(1, |interpreter|),
/// or equal values (NaN matching NaN) where the kernel wrote them; elements holding the poison
/// pattern count as unwritten (and as mismatches).
exec::Verification verify_output(const std::vector<float>& output, const interp::HostArray& want,
                                 double tolerance = 1e-4);

struct HandwrittenOptions {
  /// Work-group size, (x, y) for a 2D stencil and (x, y, z) for a 3D one; empty lets the OpenCL
  /// runtime choose (then the global size is the exact work-item count, otherwise it is rounded
  /// up to a multiple of the work-group size).
  std::vector<int64_t> local;
  bool time = true;
  int warmup = 3;
  int repeat = 10;
  double tolerance = 1e-4;
};

struct HandwrittenReport {
  runtime::Status status = runtime::Status::ok;
  std::string message; ///< the build log, the OpenCL error, or the first mismatch
  int dims = 0;        ///< of the NDRange: the stencil's rank
  std::array<int64_t, 3> global{0, 0, 0}; ///< x, y, z; the first `dims` are used
  std::array<int64_t, 3> local{0, 0, 0};  ///< 0 = chosen by the OpenCL runtime
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
