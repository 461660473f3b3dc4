#pragma once
/// The reference interpreter: evaluates any liftx program (high-level or lowered) on host arrays.
/// It is the oracle generated OpenCL kernels are checked against, so it follows the functional
/// meaning of every primitive exactly:
/// - mapSeq/mapGlb/mapWrg/mapLcl are map, reduceSeq is reduce, toGlobal/toLocal/toPrivate(f) is f,
///   id is a copy;
/// - user functions compute in their declared kinds (UserFunDef::evaluate, float in float);
/// - reduce folds left to right starting from init, in index order;
/// - data-layout primitives (split, join, slide, pad, transpose, zip, get, at) are lazy views over
///   shared storage, so a slide2D over a large grid does not copy the windows; map, reduce,
///   iterate and array(...) materialise their results.
/// Size expressions are evaluated under the bound sizes; split and slide must divide exactly
/// (UserError located at the call otherwise).
#include "ir/expr.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace liftx::interp {

/// A dense row-major host array of one scalar kind; a scalar when shape is empty. Tuple-typed
/// values are stored with one extra innermost dimension holding the components (all components
/// must then share a scalar kind, else NotImplemented).
struct HostArray {
  ir::ScalarKind kind = ir::ScalarKind::Float;
  std::vector<int64_t> shape;
  std::vector<double> data; ///< values exactly representable in the kind (float values are floats)
  int64_t size() const;     ///< product of shape (1 for a scalar)
};

/// Checks that `sizes` binds exactly the program's size variables, each >= 1. UserError naming
/// missing ones ("missing size M (the program has sizes M, N)") or extra ones.
void check_sizes(const ir::Program& p, const Sizes& sizes);

/// The concrete shape of a type under `sizes`: the array lengths outermost first, plus one
/// innermost dimension holding the components when the base type is a tuple (the HostArray
/// layout). UserError if a length does not evaluate to an exact non-negative integer.
std::vector<int64_t> concrete_shape(const ir::Type& t, const Sizes& sizes);

/// Random input for a parameter: floats/doubles uniform in [-1, 1) excluding exact zero, ints in
/// [-100, 100], bools random; deterministic for a given rng state (independent of the standard
/// library's distributions).
HostArray random_input(const ir::Type& t, const Sizes& sizes, std::mt19937_64& rng);
/// The version of what random_input draws: results cached on disk for drawn inputs are keyed by
/// it, so a change to the drawing must increment it.
inline constexpr int kRandomInputVersion = 1;

/// Reads a binary file of float32 values (native little-endian) for a parameter of type t;
/// UserError if unreadable ("cannot read FILE: ...") or if the byte count does not match the shape
/// ("FILE has 1000 floats, type [[float]N]M needs 3072 (M=48, N=64)"). Values are converted to the
/// type's scalar kind with C rules.
HostArray read_input(const std::string& path, const ir::Type& t, const Sizes& sizes);
/// The same, naming the parameter in messages ("..., parameter grid: [[float]N]M needs 3072 ...").
HostArray read_input(const std::string& path, const ir::Type& t, const Sizes& sizes,
                     std::string_view param_name);

/// Writes the values as float32 binary (native little-endian). UserError if the file cannot be
/// written.
void write_output(const std::string& path, const HostArray& a);
/// The files a result of `components` values per point is written to: `path` itself for one,
/// else one per component with its number before the extension (out.f32 -> out.0.f32,
/// out.1.f32, ...; out -> out.0, out.1, ...), as the kernels store them (one buffer each).
std::vector<std::string> component_paths(const std::string& path, size_t components);
/// Values per point of a result of type `t`: the tuple's components, 1 without a tuple.
size_t result_components(const ir::Type& t);
/// Writes a result of type `t`: one float32 file per component (component_paths). Returns the
/// files written.
std::vector<std::string> write_result(const std::string& path, const HostArray& a,
                                      const ir::Type& t);

struct EvalOptions {
  /// Threads evaluating the outermost map (contiguous chunks of its elements); 0 means
  /// default_threads(). Any thread count gives bit-identical results.
  int threads = 0;
};

/// LIFTX_THREADS from the environment when set (a positive integer, else UserError), otherwise the
/// hardware concurrency (at least 1).
int default_threads();

/// Evaluates the program on inputs (one per parameter, shapes and kinds must match, UserError
/// otherwise). Checks the sizes first (check_sizes). Closed sub-expressions (no free parameters)
/// are evaluated once per call.
HostArray evaluate(const ir::Program& p, std::span<const HostArray> inputs, const Sizes& sizes);
HostArray evaluate(const ir::Program& p, std::span<const HostArray> inputs, const Sizes& sizes,
                   const EvalOptions& options);

// ---- host memory budget (ir/interp/memory.cpp) ------------------------------------------------
/// Bytes of host memory liftx may plan for the arrays of one run: LIFTX_MAX_MEMORY when set
/// (bytes, or with a K/M/G/T suffix; `--max-memory` sets it, so worker processes inherit it),
/// otherwise half the physical memory.
int64_t host_memory_limit();
/// "8G", "512M", "1.5G", "4096" -> bytes; UserError naming `what` otherwise.
int64_t parse_memory_size(std::string_view text, std::string_view what);
/// "1.5 GiB"
std::string format_bytes(int64_t bytes);
/// An estimate of the host memory a run of `p` at `sizes` needs: its inputs and result as host
/// arrays (8 bytes per element) and once more for their float32 copies and the interpreter's
/// working arrays. Saturates instead of overflowing.
int64_t estimated_host_bytes(const ir::Program& p, const Sizes& sizes);
/// UserError, before anything is allocated, when estimated_host_bytes exceeds host_memory_limit.
/// Without `intermediates`, only the inputs and result count (a program run, not interpreted).
void check_host_memory(const ir::Program& p, const Sizes& sizes, bool intermediates = true);

struct Summary {
  std::vector<int64_t> shape;
  double checksum; ///< sum of the elements in double, in order
  double min;
  double max;
  double mean; ///< checksum / size (0 for an empty array)
};
Summary summarize(const HostArray& a);

} // namespace liftx::interp
