#pragma once
/// The code generator's shared state (internal to liftx_codegen; the public entry point is
/// codegen::generate in kernel.hpp).
///
/// One Generator walks a lowered program once: data-layout primitives evaluate to views
/// (view.hpp), computations to statements of the kernel AST (cl_ast.hpp). All generator state
/// lives here, in side tables keyed by parameter ids and names, never on IR nodes. The member
/// functions are defined by concern, one file each:
///
/// | file | what |
/// |---|---|
/// | generate.cpp | entry point, evaluation, per-node dispatch (`apply_node`), names |
/// | gen_launch_rule.cpp | the launch rule (threads tied to mapped lengths), divisibility facts |
/// | gen_records.cpp | access/barrier/call records for the features, instrumentation counters |
/// | gen_memory.cpp | allocation, stores, writes through invertible layout, address spaces |
/// | gen_loops.cpp | maps and reductions: loop kinds, loops, nesting checks, barriers |
/// | gen_iterate.cpp | iterate: two buffers swapped through pointers |
/// | gen_windows.cpp | register windows (mapSeqSlide) |
/// | gen_shared_windows.cpp | windows shared by a work-group: rings in local memory or lanes |
/// | gen_interior_tiles.cpp | a copy of a tile's code for tiles inside the grid |
/// | tile_order.cpp | the work-groups' tiles in an order with the edge tiles first |
/// | assemble.cpp | kernel signature, instrumentation preamble, the final source |
#include "codegen/cl_ast.hpp"
#include "codegen/kernel.hpp"
#include "codegen/view.hpp"

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace liftx::codegen {

/// The parallelism level of a map: its threads, and the loop variable names it gets.
enum class Level : uint8_t { Glb, Wrg, Lcl, Seq };

/// A loop being generated (innermost last in Generator::loops_).
struct LoopFrame {
  Level level;
  int dim;
  arith::Expr var;
  arith::Expr trip;
  std::string primitive;
  cl::LoopKind kind;
  size_t record = 0; ///< its index in Kernel::loops
  /// The block of its body (for kinds Block and If, its first statement declares `var`);
  /// order_edge_tiles_first rewrites a work-group's declaration to order the tiles.
  cl::Block* block = nullptr;
};

/// Whether the iterations of `loop` reuse the local memory allocated inside it: a rolled
/// reduceSeq's, whose iterations hand on only their accumulator, and a work-group's shared
/// window's (Generator::shared_slide_window), whose iterations hand on only its rings.
inline bool reuses_local_memory(const LoopFrame& loop, const std::set<size_t>& shared_windows) {
  return loop.kind == cl::LoopKind::For &&
         (loop.primitive == "reduceSeq" || shared_windows.count(loop.record) > 0);
}

/// The lengths each parallel level maps over, per dimension, in order of appearance.
struct LengthCensus {
  std::array<std::vector<arith::Expr>, 3> glb, wrg, lcl;
};

/// "mapGlb0", "mapWrg1", "mapLcl0", "mapSeq".
std::string level_name(Level level, int dim);
/// The IR type of a generated value.
ir::Type type_of(const Value& v);
/// True if applying `f` (or evaluating `e`) performs computation (user functions, copies,
/// lowered maps, reductions), as opposed to pure data layout.
bool computes(const ir::Fun& f);
bool computes(const ir::Expr& e);
/// Whether `f` maps over work-groups or global threads anywhere inside (mapWrg, mapGlb).
bool maps_in_parallel(const ir::Fun& f);

class Generator {
public:
  /// `lengths` is the census of a first pass (nullptr: this is the first pass, whose launch rule
  /// is not decided yet).
  Generator(const ir::Program& program, const Options& options, const LengthCensus* lengths);

  Kernel run();
  LengthCensus census() const { return census_; }

  // One overload per function node, dispatched by `apply`; public only so that the dispatching
  // visitor can reach them (as in ir/interp/evaluator.hpp).
  using Args = std::vector<Value>;
  Value apply_node(const ir::Lambda& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::UserFun& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Id& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Map& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::MapSeq& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::MapGlb& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::MapWrg& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::MapLcl& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Reduce& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::ReduceSeq& n, Args args, const TargetPtr& dest,
                   const ir::Type& result);
  Value apply_node(const ir::Iterate& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Zip& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Tuple& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Split& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Join& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Slide& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::SlideShifted& n, Args args, const TargetPtr& dest,
                   const ir::Type& result);

  Value apply_node(const ir::JoinShifted& n, Args args, const TargetPtr& dest,
                   const ir::Type& result);
  Value apply_node(const ir::Pad& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Transpose& n, Args args, const TargetPtr& dest,
                   const ir::Type& result);
  Value apply_node(const ir::At& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Get& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Generate& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::ToGlobal& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::ToLocal& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::ToLocalPadded& n, Args args, const TargetPtr& dest,
                   const ir::Type& result);
  Value apply_node(const ir::ToPrivate& n, Args args, const TargetPtr& dest,
                   const ir::Type& result);
  Value apply_node(const ir::AsVector& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::AsScalar& n, Args args, const TargetPtr& dest, const ir::Type& result);
  Value apply_node(const ir::Vectorize& n, Args args, const TargetPtr& dest,
                   const ir::Type& result);
  Value apply_node(const ir::MapSeqSlide& n, Args args, const TargetPtr& dest,
                   const ir::Type& result);

private:
  // ---- generate.cpp: evaluation and names
  Value eval(const ir::Expr& e, const TargetPtr& dest);
  Value eval_call(const ir::Call& call, const ir::Type& result, const TargetPtr& dest);
  Value apply(const ir::Fun& f, Args args, const TargetPtr& dest, const ir::Type& result);
  /// A layout primitive's value, stored when it has a destination.
  Value layout_result(const Value& v, const TargetPtr& dest) { return dest ? store(dest, v) : v; }
  Value lazy_map(const ir::Fun& f, const Value& x, const ir::Type& result);
  Value generate_view(const ir::Fun& f, const arith::Expr& length, const ir::Type& result);
  void bind_parameters();
  std::string fresh(const std::string& base);
  std::string reserve(const std::string& wanted);
  static std::string unreserved_base(const std::string& wanted);
  void emit(std::string line) { blocks_.back()->stmts.push_back({cl::Line{std::move(line)}}); }
  /// Defined in generate.cpp: inlined into emit_barrier, GCC 12 warns that the moved variant's
  /// string may be uninitialized (-Wmaybe-uninitialized, a false positive).
  void emit_stmt(cl::Stmt stmt);
  /// Whether the innermost block ends with a barrier of local memory only (its count after it,
  /// instrumented).
  bool ends_with_local_barrier() const;
  /// Removes that barrier (and its record) where there is one: a caller that emits one later.
  bool drop_final_local_barrier();
  cl::Block& current() { return *blocks_.back(); }

  // ---- gen_launch_rule.cpp
  void collect_size_divisors();
  /// Kernel::size_conditions of the program's shifted tilings (slideShifted, joinShifted).
  void collect_size_conditions();
  void decide_launch();
  std::optional<arith::Expr> workers(Level level, int dim) const;

  // ---- gen_interior_tiles.cpp
  /// Emits `body` (a work-group's tile's code) as Options::interior_tiles asks: a copy for tiles
  /// that touch no edge of the grid, where the body asks, else the body as it is.
  void with_interior_copy(const std::function<void()>& body);
  /// Gives the work-groups' tiles an order in which those on the grid's edges come first, where
  /// `interior` (the calls liftxTileEdge asking about the work-group's own tile) and the loops
  /// of the work-groups allow it: one group per tile along every dimension.
  void order_edge_tiles_first(const std::vector<std::string>& interior);
  /// The helper functions order_edge_tiles_first's declarations call, before the kernel.
  std::string edge_tiles_first_helpers() const;

  // ---- assemble.cpp
  /// Moves the local buffers that aligned vector reads need from the arguments to
  /// Kernel::local_arrays.
  void declare_aligned_local_arrays();

  // ---- gen_records.cpp
  /// The loops now open, as records keep them: the same nest as the previous call while they are
  /// the same loops.
  LoopNest loop_contexts() const;
  void record_access(MemoryAccess access);
  void record_loads(const ScalarValue& v);
  void emit_barrier(bool local_fence, bool global_fence);
  void count_slot(const std::string& slot);

  // ---- gen_memory.cpp
  /// A buffer for one value of `type`: `name[offset ...]` in `space`.
  struct Allocation {
    std::string name;
    arith::Expr offset;
    AddressSpace space;
    ir::ScalarKind kind;
  };
  /// `row_padding`: elements added to every innermost row (toLocalPadded), local memory only.
  Allocation allocate_array(const ir::Type& type, AddressSpace space, const std::string& writer,
                            const std::optional<arith::Expr>& row_padding = std::nullopt);
  /// A local allocation takes (and clears) the padding toLocalPadded set.
  TargetPtr allocate(const ir::Type& type, AddressSpace space, const std::string& writer);
  /// Private memory for a value of `type` whose outer dimensions are written by mapLcl loops of
  /// the dimensions `lane_dims` (outermost first) that give each work-item one iteration: each
  /// work-item holds only its own element (Target::lane_dim).
  TargetPtr allocate_per_work_item(const ir::Type& type, const std::vector<int>& lane_dims,
                                   const std::string& writer);
  /// The mapLcl dimensions of a private result of `f` over `type` that allocate_per_work_item can
  /// spread over work-items: `dim`'s, then those of mapLcl nested directly in f; empty when a
  /// work-item would run several iterations of the first.
  std::vector<int> lane_dims_of(int dim, const ir::Fun& f, const ir::Type& type);
  /// Refuses `index` into a per-work-item array unless it is the work-item's own: the variable of
  /// the enclosing mapLcl of dimension `dim`.
  void check_own_lane(int dim, const arith::Expr& index) const;
  TargetPtr allocate_components(const ir::Type& type, AddressSpace space, const std::string& writer,
                                const std::optional<arith::Expr>& row_padding);
  Value store(const TargetPtr& dest, const Value& v);
  Value store_vector(const TargetPtr& dest, const Value& v);
  TargetPtr invert(const ir::Fun& f, const TargetPtr& dest, const ir::Type& x_type) const;
  Value with_space(AddressSpace space, const ir::Fun& f, Args args, const TargetPtr& dest,
                   const ir::Type& result);
  /// Where a computation without toGlobal/toLocal/toPrivate writes: global, like Lift's default
  /// that follows the (global) inputs; rewrites choose local or private memory explicitly.
  static AddressSpace default_space() { return AddressSpace::Global; }

  // ---- gen_loops.cpp
  void check_nesting(Level level, int dim, const std::string& name);
  cl::LoopKind decide(Level level, int dim, const arith::Expr& trip, bool wants_unroll);
  cl::LoopKind emit_loop(Level level, int dim, const arith::Expr& trip, bool wants_unroll,
                         const std::string& var_base, const std::string& primitive,
                         const std::function<void(const arith::Expr&)>& body);
  Value emit_map(Level level, int dim, const ir::Fun& f, const Value& x, TargetPtr dest,
                 const ir::Type& result);
  /// A barrier at the end of each iteration of the loop just emitted, if its body has one
  /// (or `always`: the body's stages hand rows to each other through local memory).
  void add_loop_end_barrier(size_t loop_record, int dim, bool always = false);
  /// reduceSeq whose accumulator is an array or a tuple: two private copies, the function
  /// writing the next from the current (so that an element may read any other), copied back
  /// after each step with constant indices (registers once the compiler unrolls).
  Value emit_aggregate_reduce(const ir::Fun& f, const Value& init, const ArrayValue& input,
                              const TargetPtr& dest, const ir::Type& result);
  /// Copies `v` of `type` into `dest`: arrays element by element in unrolled sequential loops
  /// (for private memory), tuples field by field, scalars and vectors by store().
  void copy_into(const Value& v, const TargetPtr& dest, const ir::Type& type,
                 const std::string& primitive);
  /// The loop of a reduceSeq's steps (unrolled or not), ended by a barrier when its steps reuse
  /// local memory.
  void reduction_loop(const arith::Expr& trip, bool unroll,
                      const std::function<void(const arith::Expr&)>& step);
  Value emit_reduce(const ir::Fun& f, const ir::Expr& init_expr, const Value& x,
                    const TargetPtr& dest, const ir::Type& result);

  // ---- gen_iterate.cpp
  Value emit_iterate(const ir::Iterate& node, const Value& x, const TargetPtr& dest,
                     const ir::Type& result);

  // ---- gen_windows.cpp
  using RegisterNames = std::shared_ptr<std::vector<std::pair<std::string, ir::ScalarKind>>>;
  Value register_value(const ir::Type& type, const RegisterNames& names, int64_t offset);
  void load_registers(const std::vector<ScalarValue>& parts, const std::vector<std::string>& names);
  /// A window's registers: `slots[k]` the scalars of its k-th element, `value` the window as an
  /// array read from them.
  struct RegisterWindow {
    int64_t size = 0, step = 1;
    std::vector<std::vector<std::string>> slots;
    Value value;
  };
  /// The registers of one window element; UserError when the window is not constant or too big.
  std::vector<ir::ScalarKind> window_kinds(const ir::MapSeqSlide& node,
                                           const ir::Type& element) const;
  RegisterWindow declare_window(const ir::MapSeqSlide& node, const ir::Type& element);
  void load_slot(const RegisterWindow& window, int64_t slot, const Value& v);
  /// Shifts the window by its step (slot k takes slot k + step).
  void rotate(const RegisterWindow& window);
  /// `v` copied into fresh registers (a value whose text must outlive what it reads).
  Value hold(const Value& v, const ir::Type& type);
  Value emit_slide_window(const ir::MapSeqSlide& node, const Value& x, TargetPtr dest,
                          const ir::Type& result);
  /// mapSeqSlide(f, n, s, x) read by another window: an array whose element i, read once and in
  /// order, loads the next s elements of x, applies f and rotates (a pipeline of windows: fused
  /// time steps streamed along one dimension).
  Value window_stream(const ir::MapSeqSlide& node, const Value& x, const ir::Type& result);
  /// What a window over `arg` reads, when it is produced as the window moves: a map of a
  /// computation, another window, or a zip of such; nullopt for anything else.
  std::optional<Value> streamed_source(const ir::Expr& arg);

  // Shared windows: a window of rows (planes) in a work-group's scope, outside its mapLcl loops,
  // is shared by the group's work-items rather than held by each in registers. A window over a
  // plain array is a view of its elements; a window over a stream of computed rows reads them
  // from a ring of local buffers that the stream writes each row into (the work-items of the
  // group computing its points), a barrier after each row. The streamed temporal steps of
  // rewrite/temporal.hpp (Memory::shared_stream) are such pipelines: AN5D's N.5D blocking.
  /// Whether a window of `element`s is shared: an array element, in a work-group's scope.
  bool shares_windows(const ir::Type& element) const;
  /// The elements of a shared window's source: `produce(j)` emits the code that computes
  /// element j into its ring slot (nothing for a plain array), called once per j, in order;
  /// `view(j)` reads element j where it lies, emitting nothing.
  struct SharedSource {
    std::function<void(const arith::Expr&)> produce;
    std::function<Value(const arith::Expr&)> view;
    /// The elements a ring keeps (the last `slots` produced); 0: a view, every element.
    int64_t slots = 0;
    /// A pipelined stream's steady state, where every stage runs one element ahead of its
    /// reader so that one barrier per iteration serves them all (AN5D needs one per step):
    /// `ahead(j)` emits element j with no barrier after it (past the stream's end, its last
    /// element again, into a slot nothing reads), then the source's element that element j + 1
    /// will be the last to read. Null where the stream cannot run ahead; a view's does nothing.
    std::function<void(const arith::Expr&)> ahead;
    /// The prologue's part of that lead: once element j was produced on demand (with
    /// barriers), the source's element that element j + 1 will read last, and so on down the
    /// pipeline.
    std::function<void(const arith::Expr&)> prime;
    /// The ring lives in its work-items' registers (Options::subgroup_rows): no barrier
    /// publishes its rows.
    bool in_lanes = false;
    /// The ring is a private array per lane (in registers, or their emulation): the compiler
    /// keeps it in registers only where every index into it is a constant, so its slots are
    /// indexed by unclamped elements, which fold modulo `slots` in a copy of a loop unrolled
    /// by a multiple of them.
    bool per_lane = false;
    /// Its elements past its end can be read, to no purpose but harmlessly: they are ring slots
    /// or computed from their index (a generated array), not memory outside an array.
    bool reads_past_end = false;
  };
  SharedSource shared_source(const Value& x) const;
  void register_shared_source(const Value& produced, SharedSource source);
  /// The window of `size` elements of `source` from element `first` on.
  static Value shared_window(const SharedSource& source, const arith::Expr& first,
                             const ir::Type& window_type);
  Value shared_slide_window(const ir::MapSeqSlide& node, const Value& x, TargetPtr dest,
                            const ir::Type& result);
  Value shared_window_stream(const ir::MapSeqSlide& node, const Value& x, const ir::Type& result);
  /// The lanes of a stream whose rows `f` computes, when its ring can live in their registers
  /// (Options::subgroup_rows): see lanes_of; 0 where the rows stay in local memory.
  int64_t ring_lanes(const ir::Fun& f, const ir::Type& row);
  /// The lanes of a warp stream's rows: f is (or is a lambda whose body calls)
  /// toLocal(mapLcl0(g)) over rows [lanes][C] of floats whose work-items run one iteration each,
  /// at most 32 of them; 0 otherwise (a row shared by a work-group).
  int64_t lanes_of(const ir::Fun& f, const ir::Type& row);
  /// A ring of `slots` rows [lanes][C] held in registers, C elements per work-item (its own
  /// columns); another work-item's columns are read by lane_read. Emulated
  /// (SubgroupRows::emulated_shuffle), each row is also copied to local memory when published.
  TargetPtr lanes_ring(const ir::Type& row, int64_t slots, int64_t lanes);
  /// Copies the row in `slot` of a lanes_ring to local memory, where it has a copy (emulated).
  void publish_lane_row(const TargetPtr& ring, const arith::Expr& slot);
  /// An emulated exchange: the text reading column `column` of lane `lane` from the local copy.
  using MirrorRead = std::function<std::string(const arith::Expr& lane, const arith::Expr& column)>;
  /// Columns `own` of the work-item of mapLcl0 index `lane`: its own when `lane` is the reader's
  /// index, else each column shuffled (liftx_lane_read), or read from the copy `mirrored`.
  /// `constant_slot`: `own` is a ring slot named by a constant, whose exchanged columns are kept
  /// (exchanged_columns_) until the slot is written again.
  /// `declared_in`: the block the ring was allocated in (which holds every read of it), where
  /// the variables of its kept exchanges are declared.
  Value lane_read(const TargetPtr& own, const arith::Expr& lane, const MirrorRead& mirrored,
                  bool constant_slot, cl::Block* declared_in);

  /// `e`, a function of the reader's mapLcl0 index and constants, as the constant it is for
  /// every lane; UserError where it differs between lanes (no exchange can read it).
  arith::Expr same_for_every_lane(const arith::Expr& e) const;
  /// The helper function the shuffles call, before the kernel (assemble).
  std::string lane_exchange_helpers() const;

  // ---- assemble.cpp
  void assemble();

  /// Constant trip counts up to this are unrolled where private memory needs constant indices.
  static constexpr int64_t kMaxUnroll = 64;
  /// Registers a sliding window may hold (window size x scalars per element).
  static constexpr int64_t kMaxWindowRegisters = 512;
  /// Reductions over at most this many elements are unrolled.
  static constexpr int64_t kMaxReduceUnroll = 32;
  /// The accumulators of the array or tuple reductions being generated, innermost last
  /// (emit_aggregate_reduce; nullptr for a tuple's).
  std::vector<const ArrayValue*> aggregate_accumulators_;
  /// Local allocations made so far inside a loop that reuses its memory (reuses_local_memory):
  /// such a loop ends each iteration with a barrier.
  int64_t reused_local_allocations_ = 0;
  /// The Kernel::loops records of shared windows' loops (reuses_local_memory).
  std::set<size_t> shared_window_loops_;
  /// Streams of computed rows that shared windows read (shared_source), with the values they
  /// were returned as (kept alive, so that a pointer is never reused).
  std::vector<std::pair<std::shared_ptr<const ArrayValue>, SharedSource>> shared_sources_;
  /// The most private memory one row of a shared stream allocated (shared_window_stream): its
  /// temporaries, dead once the row is in its ring.
  int64_t widest_shared_row_ = 0;
  /// Work-items of the sub-group whose registers hold a ring (0: none).
  int64_t exchange_lanes_ = 0;
  /// Per emulated lanes_ring, the code that copies a slot's row to local memory.
  std::map<const Target*, std::function<void(const arith::Expr& slot)>> lane_mirrors_;
  /// Another lane's column, exchanged once and kept in a variable for every later read in
  /// straight-line code (a row is read by the windows of several unrolled copies): keyed by the
  /// column's register and the lane read, whatever the reader's mapLcl0 variable is named.
  std::map<std::string, std::string> exchanged_columns_;
  /// Rows published to lanes_rings so far (publish_lane_row).
  int64_t lane_rows_published_ = 0;
  /// Streams whose rows a work-group shares in local memory (not a warp's lanes) generated so
  /// far: a body with one keeps one copy (with_interior_copy).
  int64_t group_streams_ = 0;
  /// A call liftxTileEdge(i, n) generated so far: the tile's index i and the tile count n.
  struct TileEdgeCall {
    arith::Expr index;
    arith::Expr count;
  };
  /// The calls liftxTileEdge generated so far, keyed by their text (interior_tiles).
  std::map<std::string, TileEdgeCall> tile_edge_calls_;
  /// The ranks of the tile grids order_edge_tiles_first ordered (a helper function each).
  std::set<int> edge_first_ranks_;

  const ir::Program& program_;
  Options options_;
  const LengthCensus* lengths_;
  LengthCensus census_;
  SizeDivisors divisors_;
  Kernel kernel_;
  cl::Block body_;
  std::vector<cl::Block*> blocks_;          ///< where emit() appends: innermost last
  std::unordered_map<uint64_t, Value> env_; ///< parameter id -> value
  std::vector<LoopFrame> loops_;
  mutable LoopNest open_loops_;             ///< loop_contexts()'s last answer
  std::optional<AddressSpace> write_space_; ///< set by toGlobal/toLocal/toPrivate
  /// Local buffers of a constant size: those that an aligned vector read needs become arrays
  /// declared in the kernel (Kernel::local_arrays), aligned, at assembly.
  BufferNames constant_local_buffers_;
  /// Set by toLocalPadded until the local array it writes is allocated.
  std::optional<arith::Expr> local_row_padding_;
  SourceLoc loc_; ///< the primitive being generated, for errors
  std::set<std::string> reserved_;
  std::map<std::string, ir::UserFunPtr> used_userfuns_;
  int counter_ = 0;
  bool used_glb_ = false;
  bool used_wrg_ = false;
};

} // namespace liftx::codegen
