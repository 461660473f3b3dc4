#pragma once
/// Input-adaptive programs: one stencil, many grid shapes, the variant picked per shape.
///
/// `liftx adapt FILE --device D --shapes 256x256 1024x128 ... -o adaptive.json` measures the
/// best-ranked variants of a stencil at a set of training shapes and keeps a small portfolio of
/// them with a selector. An AdaptiveProgram loads that file and runs the stencil at any shape:
///
///   liftx::Context ctx("nvidia");
///   liftx::AdaptiveProgram jacobi = liftx::AdaptiveProgram::load(ctx, "adaptive.json");
///   jacobi.run({{"M", 768}, {"N", 1024}}, {grid}, out);   // grid: std::vector<float> of M*N
///
/// The selector takes the training shape nearest to the sizes (distance in log2 of each size,
/// so a grid twice as wide is as far as one twice as tall) and its fastest member that applies
/// at the sizes (its tiles and work-group divide them and it fits the device), else the next
/// nearest shape's. A member is compiled (and checked against the reference interpreter) the
/// first time it is chosen for a set of sizes; the Kernel is kept for later runs at those sizes.
///
/// Thread safety: an AdaptiveProgram may be shared between threads. Its cache has a lock of its
/// own, held while a member is chosen and compiled (compiling also takes the Context's lock);
/// runs go through the Context's lock as any Kernel::run does.
#include "liftx/errors.hpp"
#include "liftx/program.hpp"
#include "liftx/runtime.hpp"

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace liftx {

struct AdaptiveOptions {
  /// An artifact records the device it was measured on. Loading it on another device (another
  /// device name) is a UserError unless this is set: its choices were the fastest there, not
  /// here. Set, the portfolio is used anyway (every member is still checked before it runs and
  /// skipped where it does not fit this device), and notes() says so. The same device with
  /// another driver version is only a note.
  bool allow_other_device = false;
  /// Check each member's kernel against the reference interpreter (random inputs at the sizes)
  /// the first time it is compiled for a set of sizes, as Context::compile does.
  bool verify = true;
  uint64_t seed = 1;       ///< of the random inputs of the check
  double tolerance = 1e-4; ///< |kernel - interpreter| <= tolerance * max(s, |interpreter|),
                           ///< s the output's largest |interpreter|, at most 1
};

/// Which portfolio member runs at some sizes.
struct AdaptiveChoice {
  size_t member = 0;   ///< its position in the portfolio
  std::string variant; ///< its strategy, parameters and work-group, e.g. "window tile_x=16
                       ///< tile_y=4 vector=8, local 2x2"
};

/// A stencil tuned for many input shapes by `liftx adapt`: a portfolio of lowered variants and
/// the selector that picks one per shape. Copies share the portfolio and the compiled kernels.
class AdaptiveProgram {
public:
  AdaptiveProgram() = default; ///< nothing loaded; run() is a UserError
  bool empty() const { return !impl_; }

  /// Reads the JSON artifact `liftx adapt -o` wrote. UserError for a missing or unreadable
  /// file, a file that is not such an artifact (or is damaged), or an artifact measured on
  /// another device (see AdaptiveOptions::allow_other_device).
  static AdaptiveProgram load(Context& context, const std::string& path,
                              const AdaptiveOptions& options = {});

  /// Runs the member chosen for `sizes` (every size variable bound, each >= 1) once and waits,
  /// as Kernel::run does: one input per program parameter, one output (or one per tuple
  /// component of the result). UserError for bad sizes, inputs or outputs, or sizes where no
  /// member applies; KernelError if the device fails the kernel or its check.
  RunStats run(const Sizes& sizes, const std::vector<Input>& inputs, const Output& output) const;
  RunStats run(const Sizes& sizes, const std::vector<Input>& inputs,
               const std::vector<Output>& outputs) const;
  /// `p.run(sizes, inputs, {dx, dy})`, and `{out}` for one output.
  RunStats run(const Sizes& sizes, const std::vector<Input>& inputs,
               std::initializer_list<Output> outputs) const {
    return run(sizes, inputs, std::vector<Output>(outputs));
  }

  /// The member the selector picks at `sizes` (nothing is compiled): for logging. UserError for
  /// bad sizes or when no member applies there.
  AdaptiveChoice choice(const Sizes& sizes) const;
  /// Whether a member applies at `sizes`: an application with a fallback (Context::compile, or
  /// tune) asks this rather than catching the UserError of run(). UserError for bad sizes.
  bool applies(const Sizes& sizes) const;
  /// The chosen member compiled for `sizes` (from the cache after the first call): to keep data
  /// in Buffers across many runs at one shape, or to look at its OpenCL source.
  Kernel kernel(const Sizes& sizes) const;

  const std::string& program_name() const;
  /// The high-level program the portfolio was tuned for, as `liftx adapt` read it.
  const Program& program() const;
  /// Whether the artifact was made for `program`: the same printed program (definition and user
  /// functions), whether it was written in the DSL or read from .lift text. An application
  /// checks this after load() to be sure the file is of its own stencil.
  bool is_for(const Program& program) const;
  const std::string& path() const;
  /// The device the artifact was measured on (its name).
  const std::string& trained_on() const;
  /// Every member's description, in portfolio order.
  std::vector<std::string> portfolio() const;
  /// The training shapes, e.g. {{"M", 32}, {"N", 64}}.
  std::vector<Sizes> training_shapes() const;
  /// E.g. that the artifact was measured on another device or driver version.
  const std::vector<std::string>& notes() const;

  struct Impl;

private:
  std::shared_ptr<Impl> impl_;
};

} // namespace liftx
