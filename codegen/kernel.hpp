#pragma once
/// OpenCL C code generation from a lowered program.
///
/// A lowered program computes only with mapGlb/mapWrg/mapLcl/mapSeq, reduceSeq, user functions
/// and id; everything else is data layout (split, join, slide, pad, zip, get, at, transpose,
/// array, and plain `map` over layout-only functions), which the generator turns into index
/// expressions ("views") simplified by the arithmetic of ir/arith. toGlobal/toLocal/toPrivate
/// choose where a computation that has no destination yet writes its result.
///
/// One kernel serves every input size: size variables are kernel arguments. Thread counts are
/// either tied to the mapped lengths (the default: the launch rule is part of the kernel, so most
/// maps need no loop) or free (any global/local size; maps become loops).
#include "codegen/cl_ast.hpp"
#include "ir/expr.hpp"

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace liftx::codegen {

enum class AddressSpace : uint8_t { Global, Local, Private };

/// Bytes of one element of `kind` in an OpenCL buffer (bool: 1, as OpenCL's `bool`/`uchar`).
size_t scalar_bytes(ir::ScalarKind kind);
const char* address_space_name(AddressSpace s);

/// A kernel argument, in the order of the kernel's signature.
struct KernelArg {
  enum class Role : uint8_t {
    Input,     ///< a program parameter (global, read-only)
    Output,    ///< the program's result (global)
    Temporary, ///< a global buffer for an intermediate result
    Local,     ///< a local-memory buffer (its size is set at launch)
    Size,      ///< a size variable (int)
    Counters,  ///< instrumented kernels: liftx_counts
    FirstIndex ///< instrumented kernels: liftx_first_index
  };
  Role role;
  std::string name;
  ir::ScalarKind kind = ir::ScalarKind::Int;
  arith::Expr elements = arith::Expr(1); ///< buffers: element count over the size variables
  int input_index = -1;                  ///< Input: index of the program parameter
  SourceLoc loc;                         ///< where the buffer's writer was written, if known
  /// Output: which scalar component of a tuple result this buffer holds (0 for a scalar result).
  /// A result whose elements are tuples is stored as one buffer per component (struct of
  /// arrays), in the order of the tuple's scalars, nested tuples flattened.
  int output_index = 0;
  /// Input: the program parameters stored together in this buffer (ir/storage.hpp), whose
  /// input_index is then -1; absent: the buffer holds parameter input_index alone.
  std::optional<ir::StorageGroup> storage;
  bool is_buffer() const { return role != Role::Size; }
};

/// A loop enclosing a statement, as generated: what per-thread counts need for a given launch.
/// `var` is the loop's index variable (an arith variable in [0, trip)); for an unrolled loop, each
/// copy of the body is recorded separately and `var` is that copy's constant index.
struct LoopContext {
  std::string primitive; ///< "mapGlb0", "mapWrg1", "mapLcl0", "mapSeq", "reduceSeq", "iterate"
  int dim = 0;
  cl::LoopKind kind = cl::LoopKind::For;
  arith::Expr var;
  arith::Expr trip; ///< iterations over all threads sharing the loop
};

/// The loops enclosing a statement, outermost first. Immutable and shared: every record made
/// inside the same loops holds the same nest (an unrolled matrix-product block makes thousands of
/// accesses inside one), so recording one costs a reference count, not a copy of its loops.
class LoopNest {
public:
  LoopNest() : loops_(empty_loops()) {}
  explicit LoopNest(std::vector<LoopContext> loops)
      : loops_(std::make_shared<const std::vector<LoopContext>>(std::move(loops))) {}
  const std::vector<LoopContext>& loops() const { return *loops_; }
  operator const std::vector<LoopContext>&() const { return *loops_; } // NOLINT(implicit)
  auto begin() const { return loops_->begin(); }
  auto end() const { return loops_->end(); }
  size_t size() const { return loops_->size(); }
  bool empty() const { return loops_->empty(); }
  const LoopContext& operator[](size_t k) const { return (*loops_)[k]; }
  const LoopContext& front() const { return loops_->front(); }
  const LoopContext& back() const { return loops_->back(); }

private:
  static const std::shared_ptr<const std::vector<LoopContext>>& empty_loops() {
    static const auto none = std::make_shared<const std::vector<LoopContext>>();
    return none;
  }
  std::shared_ptr<const std::vector<LoopContext>> loops_;
};

/// How one map/reduction of the program became code (in emission order).
struct LoopRecord {
  std::string primitive; ///< "mapGlb0", "mapLcl1", "mapSeq", "reduceSeq", ...
  cl::LoopKind kind;
  arith::Expr trip_count; ///< iterations of the map over all threads
  SourceLoc loc;
  LoopNest enclosing; ///< the loops around it, outermost first
};

/// One element read or written in an array in memory, once per execution of its statement.
struct MemoryAccess {
  std::string buffer;
  AddressSpace space = AddressSpace::Global;
  arith::Expr index; ///< element index in the buffer, over loop variables and sizes
  ir::ScalarKind kind = ir::ScalarKind::Float;
  bool is_store = false;
  LoopNest loops; ///< enclosing loops, outermost first
  /// Elements moved by this one access: 1, or the width of a vector load/store (index is the
  /// first element's).
  int width = 1;
};

struct BarrierRecord {
  bool local_fence = true;
  bool global_fence = false;
  LoopNest loops;
};

/// One call of a user function in the kernel's statements (for operation counts).
struct CallRecord {
  ir::UserFunPtr fun;
  LoopNest loops;
};

/// Counters of an instrumented kernel (Options::instrument): two more global int buffers follow
/// the program's buffers, before the sizes:
/// - `liftx_counts`, work-items x slots(): how often each work-item executed each slot;
/// - `liftx_first_index`, work-items x access_slots: the element index of each access the first
///   time the work-item executed it (-1 if never).
/// Slots, in order: one per entry of Kernel::accesses, one per Kernel::barriers, one per
/// Kernel::loops (counting entries into the loop's body: iterations of a for, an if taken, a
/// block run). A work-item's number is get_global_id(0) + G0 * (get_global_id(1) + G1 *
/// get_global_id(2)) with Gd the global sizes.
struct Instrumentation {
  int access_slots = 0;
  int barrier_slots = 0;
  int loop_slots = 0;
  int slots() const { return access_slots + barrier_slots + loop_slots; }
};

/// Launch sizes per dimension as expressions over the size variables; `nullopt` means "chosen at
/// launch" (free thread counts, or a local size the generator does not constrain).
struct LaunchRule {
  int dims = 1;
  std::array<std::optional<arith::Expr>, 3> global;
  std::array<std::optional<arith::Expr>, 3> local;
};

struct Kernel {
  std::string name;
  std::string source; ///< complete OpenCL C: user functions, then the kernel
  std::vector<KernelArg> args;
  LaunchRule launch;
  std::vector<LoopRecord> loops;
  /// Every array access of the kernel's statements, in emission order (loads of a statement
  /// before its store). Scalar variables (accumulators) are registers, not recorded.
  std::vector<MemoryAccess> accesses;
  std::vector<BarrierRecord> barriers;
  std::vector<CallRecord> calls;
  std::optional<Instrumentation> instrumentation; ///< set when generated with Options::instrument
  cl::Census census;                              ///< fors, ifs and barriers of the kernel body
  /// Size variables the kernel assumes to be multiples of a number (size variable, divisor):
  /// vector accesses are aligned only then. The program's exact divisions (split, slide,
  /// asVector) already demand it; launches check it.
  std::vector<std::pair<std::string, int64_t>> size_divisors;
  /// Sizes the kernel needs beyond its divisors: each expression of the size variables must be
  /// at least 0 (a shifted tiling's array holds a tile, and its last tile leaves the margin:
  /// slideShifted, joinShifted), with what it demands in words. Launches check them.
  struct SizeCondition {
    arith::Expr at_least_zero;
    std::string what;
  };
  std::vector<SizeCondition> size_conditions;
  /// Private memory per work-item in bytes: private arrays, scalars and register windows, every
  /// one the kernel declares (the register estimate's basis: launch_refusal).
  int64_t private_bytes = 0;
  /// The part of private_bytes that the unrolled steps of a reduction declare anew although the
  /// previous step's are dead: each step's copies of its operands (a product's chunk of steps).
  int64_t private_reused_bytes = 0;
  /// Private memory live at once: what the variant space holds to the device's limit.
  int64_t live_private_bytes() const { return private_bytes - private_reused_bytes; }
  /// The register windows' share of private_bytes (mapSeqSlide).
  int64_t window_bytes = 0;
  /// Local memory declared in the kernel rather than passed as an argument: the local buffers of
  /// a constant size that aligned vector reads need aligned (an argument's alignment is the
  /// platform's choice), `alignment` bytes each. Role Local; not among `args`.
  struct LocalArray {
    KernelArg buffer;
    int64_t alignment = 0;
  };
  /// Options::interior_tiles: the number of tiles along each dimension whose edges decide which
  /// copy of the code a tile runs. A grid with fewer than 3 along one has no interior tile, so a
  /// check at such sizes never runs the interior copy (exec checks at larger sizes then).
  std::vector<arith::Expr> interior_tile_counts;
  std::vector<LocalArray> local_arrays;
  /// Local memory per work-group in bytes (over the size variables), arguments and arrays.
  arith::Expr local_bytes() const;
  /// Host-side iteration (ir/host_iteration.hpp): the program runs as `launches` launches of
  /// this kernel (its step), each launch after the first reading the previous one's output in
  /// place of input `iterated_input` (two buffers swapped between launches); the last launch's
  /// output is the program's result. A plain kernel: 1 and -1.
  int64_t launches = 1;
  int iterated_input = -1;
  /// A host iteration with a tail (ir::HostIteration::tail_count > 0, a temporal-blocking
  /// remainder): after this kernel's `launches`, the tail kernel's `launches` go on with the same
  /// two buffers, the first reading this kernel's last result. Null otherwise.
  std::shared_ptr<const Kernel> tail;
  /// Launches of the whole program: this kernel's and its tail's.
  int64_t total_launches() const { return launches + (tail ? tail->launches : 0); }
};

/// Host-side iteration: whether launch `k` (0-based) of `launches` writes the program's output
/// rather than the second buffer. The launches alternate so that the last one writes the
/// output; launch k reads what launch k - 1 wrote (the first reads the input).
inline bool launch_writes_output(int64_t k, int64_t launches) {
  return (launches - 1 - k) % 2 == 0;
}

/// Why launching `kernel` with these local sizes would let the work-items of a group disagree on
/// reaching a barrier (a barrier inside a mapLcl loop whose trip count the local size does not
/// divide), or nullopt when every barrier is reached uniformly. A local size of 0 ("the runtime
/// chooses") counts as unknown.
std::optional<std::string>
divergent_barrier(const Kernel& kernel, const std::array<int64_t, 3>& local, const Sizes& sizes);

/// Why `kernel`'s index arithmetic could leave the 32-bit `int` it is computed in at these sizes
/// (some intermediate of an index, as printed, bounded above 2^31 - 1 from the variables' ranges),
/// or nullopt when every index provably fits.
std::optional<std::string> index_overflow(const Kernel& kernel, const Sizes& sizes);

/// Where the rows of a warp stream's rings live (rewrite::TemporalTiling::Memory::warp_stream):
/// a ring written by a mapLcl whose work-items run one iteration each, in a work-group of at most
/// 32 work-items, and read by every work-item at one offset from its own columns.
enum class SubgroupRows : uint8_t {
  local_memory, ///< in local memory, a barrier after each row (any device)
  /// in each work-item's registers, another work-item's element read by NVIDIA's shfl.sync.idx
  /// (inline PTX): the work-group is one warp
  nvidia_shuffle,
  /// in registers, each row also copied to local memory as it is published, where another
  /// work-item's element is read at the slot, lane and column a shuffle would read (any device:
  /// how PoCL checks the register form)
  emulated_shuffle,
};

struct Options {
  /// Tie thread counts to the mapped lengths (default). When false, the kernel is valid for any
  /// launch size and every parallel map is a loop over its range.
  bool tie_threads_to_lengths = true;
  /// Count, per work-item, every access, barrier and loop body at run time (see Instrumentation):
  /// the dynamic side that validates static features. Same kernel otherwise.
  bool instrument = false;
  /// Write the OpenCL C text (Kernel::source). Without it the kernel has everything else (its
  /// records, arguments, launch and census): what static analysis reads, without the text's
  /// assembly, scalarisation and printing, for a ranking that builds nothing.
  bool source = true;
  SubgroupRows subgroup_rows = SubgroupRows::local_memory;
  /// Give each work-group tile's code a copy for tiles inside the grid: where the body of the
  /// innermost mapWrg asks which edges of the grid its tile touches (liftxTileEdge), it runs
  /// `if (every such edge is 0) {the body, each of them 0} else {the body}`, so that the OpenCL
  /// compiler drops the boundary repairs of interior tiles. The same records (features) and
  /// results; twice the text.
  bool interior_tiles = false;
  /// With interior_tiles, map the work-groups to tiles so that those on the grid's edges, which
  /// run the repairs, start first, rather than last for the last rows (where every work-group
  /// computes one tile, along every dimension its tiles are cut in).
  bool edge_tiles_first = true;
};

/// The types a value of `type` is stored as, one buffer each: `type` itself when it holds no
/// tuple, else one array type per scalar of the tuple (nested tuples flattened, in order), each
/// with `type`'s array shape: [[(float, int)]N]M -> [[float]N]M, [[int]N]M. A program's result is
/// stored so: one Output argument per component (KernelArg::output_index).
std::vector<ir::Type> stored_components(const ir::Type& type);

/// Generates the kernel. A program whose body is `iterate(T, f, p)` over a parameter p gets f's
/// kernel with Kernel::launches = T (f's result must be stored as one buffer of p's type). A
/// program that is not lowered or not lowerable (a plain map or reduce left, mapLcl outside
/// mapWrg, toLocal outside mapWrg, parallel maps nested in the same dimension, ...) is a
/// UserError naming the primitive and its source location.
Kernel generate(const ir::Program& program, const Options& options = {});

} // namespace liftx::codegen
