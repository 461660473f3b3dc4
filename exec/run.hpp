#pragma once
/// Running one lowered program on an OpenCL device: generate the kernel, build it (cached), run
/// it on random inputs, check every output element against the reference interpreter, and time
/// it with profiling events.
#include "codegen/kernel.hpp"
#include "codegen/launch.hpp"
#include "ir/interp/interp.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "runtime/status.hpp"
#include "target/profile.hpp"

#include <nlohmann/json.hpp>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace liftx::exec {

/// Device copies of one set of inputs, uploaded on first use and shared by every kernel run on
/// them (kernels only read their inputs): a driver that runs many variants of one stencil on one
/// device uploads each input once instead of once per variant.
class UploadedInputs {
public:
  /// The buffer holding `inputs[index]` as `kind`; `inputs` must be the same set on every call.
  cl::Buffer buffer(runtime::Device& device, const std::vector<interp::HostArray>& inputs,
                    size_t index, ir::ScalarKind kind);

  /// The buffer holding the inputs `group` stores together, packed in its layout.
  cl::Buffer group_buffer(runtime::Device& device, const std::vector<interp::HostArray>& inputs,
                          const ir::StorageGroup& group, ir::ScalarKind kind);

private:
  void check_same(const std::vector<interp::HostArray>& inputs);
  const std::vector<interp::HostArray>* inputs_ = nullptr;
  std::map<std::pair<size_t, ir::ScalarKind>, cl::Buffer> buffers_;
  std::map<std::pair<std::string, ir::ScalarKind>, cl::Buffer> group_buffers_;
};

/// Untimed and timed runs per measurement, the same in every command and in liftx::tune().
inline constexpr int kDefaultWarmup = 3;
inline constexpr int kDefaultRepeat = 10;

struct RunOptions {
  /// Thread counts per dimension; empty = tied to the mapped lengths (see codegen::Options).
  /// Giving only `local` keeps the global size of the launch rule, rounded up to a multiple.
  std::vector<int64_t> global;
  std::vector<int64_t> local;
  int warmup = kDefaultWarmup;
  int repeat = kDefaultRepeat;
  bool check = true;
  bool time = true;
  /// Compare with the float4-copy roofline of the device (measured once, cached).
  bool roofline = true;
  uint64_t seed = 1;
  /// An output matches when |kernel - interpreter| <= tolerance * max(s, |interpreter|), s the
  /// output's largest |interpreter| and at most 1 (Tolerance, output_floor).
  double tolerance = 1e-4;
  /// Generate the instrumented kernel (run_instrumented sets this).
  bool instrument = false;
  /// Verify against the interpretation of this program instead of the one run: typically the
  /// high-level stencil a hand- or machine-lowered variant comes from. Its parameters and result
  /// must have the variant's types. Its float results are cached on disk (LIFTX_CACHE_DIR/
  /// references), keyed by reference_cache_key (program, user functions, sizes, seed), so the
  /// variants of one stencil share one interpretation.
  const ir::Program* reference = nullptr;
  /// Inputs drawn earlier with draw_inputs(program, sizes, seed), and the reference result on
  /// them: a driver that runs many variants of one stencil draws and interprets once. Both must
  /// match `seed` and the sizes; null = draw / interpret (or read the disk cache) in each run.
  const std::vector<interp::HostArray>* inputs = nullptr;
  const interp::HostArray* expected = nullptr;
  /// Device copies of `inputs` kept across runs; null = upload in each run.
  UploadedInputs* uploaded = nullptr;
  /// An iterated program (a host iteration of more than this many launches of its step kernel,
  /// with or without a remainder) is verified with its step kernel launched this many times and
  /// its remainder as it is, against the reference iterated as many steps, on the full grid; then
  /// timed at its full count without a check. The kernels and launches are the ones timed, and
  /// the interpreter runs a few steps instead of all (64 steps at 8192² take minutes).
  /// Verification::steps_checked says how many. 0: every step checked.
  int64_t check_launches = 0;
  /// The steps one launch of the step kernel computes (a fused launch: space::steps_per_launch),
  /// which check_launches needs when the program has a remainder; 0: the reference's steps over
  /// the launches, when they divide and there is no remainder (else every step is checked).
  int64_t steps_per_launch = 0;
  /// Verify at these sizes instead of the run's (empty: at the run's): the same kernel under the
  /// same launch rule (tied thread counts follow the lengths; free ones are kept), on inputs
  /// drawn at these sizes, against the reference interpreted at them; then the run at its own
  /// sizes is timed unchecked. For programs whose interpretation at the run's sizes takes
  /// minutes (a matrix product at 4096³); Verification::checked_sizes says so.
  Sizes check_sizes;
  /// Write the kernel's result here as float32 (interp::component_paths: one file per output
  /// of a tuple result), after the check and the timed runs; empty = not written.
  std::string output_file;

  /// Where a warp stream's rows live (codegen::Options::subgroup_rows); nullopt: as the device
  /// allows, in registers exchanged by shfl.sync on NVIDIA's and in local memory elsewhere.
  std::optional<codegen::SubgroupRows> subgroup_rows;
  /// Whether interior tiles get a copy of their code without boundary repairs
  /// (codegen::Options::interior_tiles); nullopt: as the device prefers (interior_tiles_on).
  std::optional<bool> interior_tiles;

  /// The launch these options ask for (codegen::prepare_launch chooses the concrete one), rows
  /// where the device keeps them and one copy of each tile's code unless the options say
  /// otherwise.
  codegen::LaunchRequest request() const {
    return {global, local, instrument, subgroup_rows, interior_tiles.value_or(false)};
  }
};

/// Where a warp stream's rows live on a device of `profile` when the options leave it open: in
/// the lanes' registers, exchanged by shfl.sync, on NVIDIA's; in local memory elsewhere.
codegen::SubgroupRows subgroup_rows_on(const target::DeviceProfile& profile);

/// Whether a kernel run on a device of `profile` gives interior tiles a copy of their code
/// without boundary repairs (codegen::Options::interior_tiles: work-groups' tiles only): on
/// GPUs, where the repairs' selects cost a warp stream a large share of its instructions; not on
/// CPUs, whose compilers (PoCL's) take twice as long for little.
bool interior_tiles_on(const target::DeviceProfile& profile);

/// The random inputs run_program draws for `program` with `seed` (one generator for all
/// parameters, in order): what other drivers use to reproduce its checks. Refused when they, and
/// the program's intermediates if it is `interpreted`, would not fit in host memory.
std::vector<interp::HostArray> draw_inputs(const ir::Program& program, const Sizes& sizes,
                                           uint64_t seed, bool interpreted = true);

/// What the disk cache of reference results is keyed by: the canonical program, the full text of
/// every user function it calls, the input generator's version, the sizes and the seed.
std::string reference_cache_key(const ir::Program& reference, const Sizes& sizes, uint64_t seed);

/// The interpreter's result for `options.reference` (or `program`) on `inputs`, from the disk
/// cache when a reference is given and its result is float.
interp::HostArray reference_result(const ir::Program& program, const RunOptions& options,
                                   const std::vector<interp::HostArray>& inputs,
                                   const Sizes& sizes);

struct Verification {
  bool checked = false;
  bool passed = false;
  int64_t elements = 0;
  int64_t mismatches = 0;
  int64_t unwritten = 0; ///< elements still holding the poison pattern
  double max_abs_error = 0;
  std::string first_mismatch; ///< "element 17: kernel 0.5, interpreter 0.25"
  /// RunOptions::check_launches: the steps checked and the steps the program runs; both 0 when
  /// the program was checked as it runs.
  int64_t steps_checked = 0;
  int64_t steps = 0;
  /// RunOptions::check_sizes: the sizes the check ran at; empty when at the run's own.
  Sizes checked_sizes;
  /// The reference itself moves beyond the tolerance when its inputs move by one ulp (an
  /// iteration that amplifies rounding), so no kernel can be checked against it: the check
  /// failed, or (passed) it checked fewer steps because every step's reference is so.
  bool reference_ill_conditioned = false;
};

/// RunOptions::check_launches's shortened program and reference.
struct ShortCheck {
  ir::Program program;   ///< the step kernel launched check_launches times, then the remainder
  ir::Program reference; ///< the reference's step iterated as many steps
  int64_t steps = 0;     ///< the reference's steps
  int64_t steps_checked = 0;
};
/// The shortened check of `program` (lowered) against `reference`, or nullopt when it is not an
/// iteration of more than `launches` launches of one reference step each (`steps_per_launch`
/// steps a launch: RunOptions::steps_per_launch), so that every step is to be checked.
std::optional<ShortCheck> short_check(const ir::Program& program, const ir::Program& reference,
                                      int64_t launches, int64_t steps_per_launch);

/// "checked on 5 of 64 steps" for a shortened check, "checked at K=512 M=512 N=512" for one at
/// smaller sizes (both, joined by "; ", for both), empty otherwise.
std::string describe_check(const Verification& v);

/// "3 of 1024 elements differ; first: element 17: kernel 0.5, interpreter 0.25"
std::string describe_mismatches(const Verification& v);

struct RunReport {
  runtime::Status status = runtime::Status::ok;
  std::string message; ///< the build log, the OpenCL error, or the first mismatch
  std::string program;
  std::string device;
  Sizes sizes;
  codegen::Launch launch;
  int64_t local_bytes = 0;
  double build_ms = 0;
  bool cache_hit = false;
  /// Compiling the kernel from source: this run's compilation or the recorded time of the binary
  /// it loaded from disk; 0 when this process had built it already (see runtime::BuildResult).
  double compile_ms = 0;
  std::optional<runtime::Timing> timing;
  double bytes_moved = 0; ///< each input read once, the output written once, per launch
  /// Launches of the kernel per run of the program (codegen::Kernel::launches): an iterated
  /// program's timing covers all of them, first start to last end.
  int64_t launches = 1;
  std::optional<double> gb_per_s;
  std::optional<double> roofline_gb_per_s;
  std::optional<double> roofline_fraction;
  /// Floating-point operations per run of the program (count_flops): of RunOptions::reference
  /// when one is given, so that every lowering of one algorithm counts the same, else of the
  /// program run; 0 for a program without floating-point arithmetic, and in an untimed run.
  double flops = 0;
  std::optional<double> gflop_per_s; ///< flops over the median time, with a time and flops
  /// The device's fp32 peak (fp32_peak_gflop_per_s): an estimate, not a measurement; absent when
  /// the device does not report what it follows from.
  std::optional<double> fp32_peak_gflop_per_s;
  std::optional<double> fp32_peak_fraction;
  Verification verification;
  std::string kernel_source;
  std::vector<std::string> output_files; ///< RunOptions::output_file's files, as written
};

/// The fp32 peak of a device in GFLOP/s, as the analytic features estimate it from its compute
/// units, clock and usual lanes per compute unit (target::DeviceProfile::throughput), an FMA
/// counting 2 flops; nullopt when the device reports no compute units or no clock.
std::optional<double> fp32_peak_gflop_per_s(const target::DeviceProfile& device);

/// Sets the arithmetic figures of a timed report from `flops` (count_flops) and the device's peak
/// (nullopt: unknown, the rate without a fraction); leaves them unset without a time.
void set_arithmetic_rate(RunReport& report, double flops, std::optional<double> peak_gflop_per_s);

nlohmann::json to_json(const RunReport& report);
RunReport report_from_json(const nlohmann::json& json);

/// The OpenCL global and local ranges of a launch (the runtime's choice of local size when the
/// launch leaves it open).
std::pair<cl::NDRange, cl::NDRange> ndranges(const codegen::Launch& launch);

/// What an instrumented run of a program counted, per work-item (see codegen::Instrumentation).
struct DynamicCounts {
  codegen::Kernel kernel; ///< the instrumented kernel (its records name the slots)
  codegen::Launch launch;
  int64_t work_items = 0;
  std::vector<int32_t> counts;      ///< work_items x kernel.instrumentation->slots()
  std::vector<int32_t> first_index; ///< work_items x access slots
  int32_t count(int64_t work_item, int slot) const;
};
/// Runs the instrumented kernel once on random inputs with the launch `options` chooses (as
/// run_program would) and reads back the counters. Its result is verified too (wrong_result
/// throws InternalError: instrumentation must not change what the kernel computes). An iterated
/// program (codegen::Kernel::launches > 1) runs all its launches: its counts add up over them,
/// while static features describe one launch.
DynamicCounts run_instrumented(runtime::Device& device, const ir::Program& program,
                               const Sizes& sizes, const RunOptions& options);

/// The tolerance a reordered float reduction needs at `sizes`: 8 L 2^-24 for the longest
/// reduction of `program` (L elements), 0 without one. A kernel may reduce in another order than
/// the interpreter (split-reduce combines partial sums), and the rounding error of a sum of L
/// terms grows with L (about L u per unit of the terms, u = 2^-24; liftx's inputs in [-1, 1)
/// keep the terms near 1). run_program verifies with the larger of this and
/// RunOptions::tolerance, for the program run and its reference.
double reordering_tolerance(const ir::Program& program, const Sizes& sizes);

/// Generates, builds, runs, verifies and times. A program the generator refuses or a launch the
/// device cannot take is a UserError; a kernel that fails to build or run or gives a wrong result
/// is reported in the status.
RunReport run_program(runtime::Device& device, const ir::Program& program, const Sizes& sizes,
                      const RunOptions& options);

} // namespace liftx::exec
