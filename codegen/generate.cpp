// The code generator: walks a lowered program once per phase (a first pass collects the mapped
// lengths that decide the launch rule, the second emits), evaluating data-layout primitives to
// views and computations to statements. All codegen state lives here, never on IR nodes.
#include "codegen/kernel.hpp"
#include "codegen/view.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

namespace liftx::codegen {

const char* address_space_name(AddressSpace s) {
  switch (s) {
  case AddressSpace::Global:
    return "global";
  case AddressSpace::Local:
    return "local";
  case AddressSpace::Private:
    return "private";
  }
  return "?";
}

size_t scalar_bytes(ir::ScalarKind k) {
  switch (k) {
  case ir::ScalarKind::Bool:
    return 1;
  case ir::ScalarKind::Int:
    return 4;
  case ir::ScalarKind::Float:
    return 4;
  case ir::ScalarKind::Double:
    return 8;
  }
  return 4;
}

arith::Expr Kernel::local_bytes() const {
  arith::Expr bytes(0);
  for (const KernelArg& a : args)
    if (a.role == KernelArg::Role::Local)
      bytes = bytes + a.elements * static_cast<int64_t>(scalar_bytes(a.kind));
  return bytes;
}

namespace {

enum class Level : uint8_t { Glb, Wrg, Lcl, Seq };

struct LoopFrame {
  Level level;
  int dim;
  arith::Expr var;
  arith::Expr trip;
  std::string primitive;
  cl::LoopKind kind;
};

/// The lengths each parallel level maps over, per dimension, in order of appearance.
struct LengthCensus {
  std::array<std::vector<arith::Expr>, 3> glb, wrg, lcl;
};

ir::Type type_of(const Value& v) {
  if (const ScalarValue* s = as_scalar(v))
    return s->width == 1 ? ir::Type::scalar(s->kind) : ir::Type::vector(s->kind, s->width);
  if (const ArrayValue* a = as_array(v))
    return a->type;
  std::vector<ir::Type> elements;
  for (const Value& e : as_tuple(v)->elements)
    elements.push_back(type_of(e));
  return ir::Type::tuple(std::move(elements));
}

/// True if applying `f` (or evaluating `e`) performs computation (user functions, copies, lowered
/// maps, reductions), as opposed to pure data layout.
bool computes(const ir::Fun* f, const ir::Expr* e) {
  bool found = false;
  std::function<void(const ir::Fun&)> visit_fun;
  std::function<void(const ir::Expr&)> visit_expr = [&](const ir::Expr& e) {
    ir::for_each_child(e, visit_fun, visit_expr);
  };
  visit_fun = [&](const ir::Fun& g) {
    if (g.as<ir::UserFun>() || g.as<ir::Id>() || g.as<ir::MapSeq>() || g.as<ir::MapGlb>() ||
        g.as<ir::MapWrg>() || g.as<ir::MapLcl>() || g.as<ir::ReduceSeq>() || g.as<ir::Reduce>() ||
        g.as<ir::Iterate>() || g.as<ir::MapSeqSlide>() || g.as<ir::Vectorize>()) {
      found = true;
      return;
    }
    ir::for_each_child(g, visit_fun, visit_expr);
  };
  if (f)
    visit_fun(*f);
  if (e)
    visit_expr(*e);
  return found;
}
bool computes(const ir::Fun& f) {
  return computes(&f, nullptr);
}
bool computes(const ir::Expr& e) {
  return computes(nullptr, &e);
}

std::string level_name(Level level, int dim) {
  switch (level) {
  case Level::Glb:
    return fmt::format("mapGlb{}", dim);
  case Level::Wrg:
    return fmt::format("mapWrg{}", dim);
  case Level::Lcl:
    return fmt::format("mapLcl{}", dim);
  case Level::Seq:
    return "mapSeq";
  }
  return "?";
}

class Generator {
public:
  Generator(const ir::Program& program, const Options& options, const LengthCensus* lengths)
      : program_(program), options_(options), lengths_(lengths) {
    for (const arith::Expr& v : program.size_vars())
      reserved_.insert(v.node().name);
    collect_size_divisors();
    if (lengths_)
      decide_launch();
  }

  Kernel run() {
    kernel_.name = program_.name;
    blocks_.push_back(&body_);
    bind_parameters();
    ir::Type result = program_.body.type();
    ir::ScalarKind kind = memory_kind(result, "the program's result");
    std::string out = fresh("out");
    kernel_.args.push_back(
        {KernelArg::Role::Output, out, kind, scalar_count(result), -1, program_.loc});
    if (!computes(program_.body))
      throw UserError(fmt::format("{}: the program's result must be computed by a map (it is "
                                  "pure data layout)",
                                  program_.name),
                      program_.loc);
    eval(program_.body, memory_target(out, result, 0, AddressSpace::Global));
    if (used_glb_ && used_wrg_)
      throw UserError("a kernel cannot mix mapGlb with mapWrg/mapLcl", program_.loc);
    finish();
    return std::move(kernel_);
  }

  LengthCensus census() const { return census_; }

private:
  // ---- divisibility facts
  // ------------------------------------------------------------------------
  /// A length (p/q)*N in a type of the program means the exact division made N a multiple of q.
  void collect_size_divisors() {
    std::set<std::string> size_names;
    for (const arith::Expr& v : program_.size_vars())
      size_names.insert(v.node().name);
    std::set<const void*> seen;
    std::function<void(const ir::Type&)> on_type = [&](const ir::Type& t) {
      if (const auto* a = t.as<ir::ArrayType>()) {
        const arith::Node& n = a->length.node();
        if (n.kind == arith::Kind::Prod && n.operands.size() == 2) {
          const arith::Node& c = n.operands[0].node();
          const arith::Node& v = n.operands[1].node();
          if (c.kind == arith::Kind::Cst && c.value.den > 1 && v.kind == arith::Kind::Var &&
              size_names.count(v.name)) {
            int64_t& d = divisors_[v.name];
            d = d == 0 ? c.value.den : std::lcm(d, c.value.den);
          }
        }
        on_type(a->element);
      } else if (const auto* tuple = t.as<ir::TupleType>()) {
        for (const ir::Type& e : tuple->elements)
          on_type(e);
      }
    };
    std::function<void(const ir::Fun&)> on_fun;
    std::function<void(const ir::Expr&)> on_expr = [&](const ir::Expr& e) {
      if (!seen.insert(e.identity()).second)
        return;
      on_type(e.type());
      ir::for_each_child(e, on_fun, on_expr);
    };
    on_fun = [&](const ir::Fun& f) {
      if (seen.insert(f.identity()).second)
        ir::for_each_child(f, on_fun, on_expr);
    };
    on_expr(program_.body);
  }

  // ---- names and emission ----------------------------------------------------------------------
  std::string fresh(const std::string& base) {
    while (true) {
      std::string name = fmt::format("{}_{}", base, counter_++);
      if (reserved_.insert(name).second)
        return name;
    }
  }
  std::string reserve(const std::string& wanted) {
    std::string name = wanted;
    while (!reserved_.insert(name).second)
      name = fmt::format("{}_{}", wanted, counter_++);
    return name;
  }
  void emit(std::string line) { blocks_.back()->stmts.push_back({cl::Line{std::move(line)}}); }
  void emit_stmt(cl::Stmt stmt) { blocks_.back()->stmts.push_back(std::move(stmt)); }
  cl::Block& current() { return *blocks_.back(); }

  void bind_parameters() {
    for (size_t i = 0; i < program_.params.size(); ++i) {
      const ir::Expr& p = program_.params[i];
      const auto* param = p.as<ir::Param>();
      ir::Type t = p.type();
      if (t.is_scalar()) {
        std::string name = reserve(param->name);
        kernel_.args.push_back({KernelArg::Role::Input, name, t.as<ir::ScalarType>()->kind,
                                arith::Expr(1), static_cast<int>(i), program_.loc});
        ir::ScalarKind kind = t.as<ir::ScalarType>()->kind;
        env_[param->id] = ScalarValue{
            name + "[0]", kind, {MemoryAccess{name, AddressSpace::Global, 0, kind, false, {}}}};
        continue;
      }
      std::string name = reserve(param->name);
      kernel_.args.push_back({KernelArg::Role::Input, name, memory_kind(t, param->name.c_str()),
                              scalar_count(t), static_cast<int>(i), program_.loc});
      env_[param->id] = memory_value(name, t, 0, AddressSpace::Global);
    }
  }

  // ---- launch rule ----------------------------------------------------------------------------
  void decide_launch() {
    LaunchRule& rule = kernel_.launch;
    int dims = 1;
    for (int d = 0; d < 3; ++d) {
      if (!lengths_->glb[d].empty() || !lengths_->wrg[d].empty())
        dims = d + 1;
      if (!options_.tie_threads_to_lengths)
        continue;
      if (!lengths_->glb[d].empty()) {
        rule.global[d] = lengths_->glb[d].front();
      } else if (!lengths_->wrg[d].empty()) {
        arith::Expr local = most_common(lengths_->lcl[d]).value_or(arith::Expr(1));
        rule.local[d] = local;
        rule.global[d] = lengths_->wrg[d].front() * local;
      }
    }
    rule.dims = dims;
  }

  static std::optional<arith::Expr> most_common(const std::vector<arith::Expr>& lengths) {
    if (lengths.empty())
      return std::nullopt;
    std::unordered_map<arith::Expr, int> counts;
    for (const arith::Expr& l : lengths)
      ++counts[l];
    arith::Expr best = lengths.front();
    for (const arith::Expr& l : lengths)
      if (counts[l] > counts[best])
        best = l;
    return best;
  }

  /// Threads (or groups) sharing the iterations of a parallel map, as an expression, when the
  /// launch rule ties them to lengths; nullopt when free.
  std::optional<arith::Expr> workers(Level level, int dim) const {
    const LaunchRule& rule = kernel_.launch;
    if (!lengths_ || !options_.tie_threads_to_lengths)
      return std::nullopt;
    switch (level) {
    case Level::Glb:
      return rule.global[dim];
    case Level::Wrg:
      if (rule.global[dim] && rule.local[dim])
        return lengths_->wrg[dim].front();
      return std::nullopt;
    case Level::Lcl:
      return rule.local[dim];
    case Level::Seq:
      return arith::Expr(1);
    }
    return std::nullopt;
  }

  // ---- evaluation -----------------------------------------------------------------------------
  Value eval(const ir::Expr& e, const TargetPtr& dest) {
    if (const auto* p = e.as<ir::Param>()) {
      auto it = env_.find(p->id);
      LIFTX_INTERNAL_CHECK(it != env_.end(), "unbound parameter {}", p->name);
      return dest ? store(dest, it->second) : it->second;
    }
    if (const auto* l = e.as<ir::Literal>()) {
      Value v = ScalarValue{ir::literal_text(l->value), ir::kind_of(l->value)};
      std::get<ScalarValue>(v).constant = l->value;
      return dest ? store(dest, v) : v;
    }
    const auto& call = *e.as<ir::Call>();
    SourceLoc saved = loc_;
    if (call.loc.valid())
      loc_ = call.loc;
    Value result = eval_call(call, e.type(), dest);
    loc_ = saved;
    return result;
  }

  Value eval_call(const ir::Call& call, const ir::Type& result, const TargetPtr& dest) {
    const ir::Fun& f = call.fun;
    if (dest && call.args.size() == 1) {
      // Writes through invertible layout: the argument writes straight into the destination.
      if (TargetPtr inner = invert(f, dest, call.args[0].type())) {
        eval(call.args[0], inner);
        return target_value(dest);
      }
    }
    std::vector<Value> args;
    for (const ir::Expr& a : call.args)
      args.push_back(eval(a, nullptr));
    return apply(f, std::move(args), dest, result);
  }

  /// The target of X such that writing X there stores f(X) in `dest`, for layout functions that
  /// only reorder (join, split, transpose, asScalar, and maps of them); nullptr for anything else.
  TargetPtr invert(const ir::Fun& f, const TargetPtr& dest, const ir::Type& x_type) const {
    if (f.as<ir::AsScalar>()) {
      const auto* v = x_type.as<ir::ArrayType>()->element.as<ir::VectorType>();
      return as_scalar_inverse(dest, v->width, x_type, divisors_);
    }
    if (f.as<ir::Join>()) {
      arith::Expr chunk = x_type.as<ir::ArrayType>()->element.as<ir::ArrayType>()->length;
      return join_inverse(dest, chunk, x_type);
    }
    if (const auto* s = f.as<ir::Split>())
      return split_inverse(dest, s->chunk, x_type);
    if (f.as<ir::Transpose>())
      return transpose_inverse(dest, x_type);
    if (const auto* m = f.as<ir::Map>()) {
      const auto* array = x_type.as<ir::ArrayType>();
      if (!array)
        return nullptr;
      ir::Type element = array->element;
      ir::Fun g = m->f;
      // Check invertibility once, on a probe of the first element.
      if (!invert(g, dest->at(arith::Expr(0)), element))
        return nullptr;
      auto t = std::make_shared<Target>();
      t->type = x_type;
      t->space = dest->space;
      t->at = [this, dest, g, element](const arith::Expr& i) {
        return invert(g, dest->at(i), element);
      };
      return t;
    }
    return nullptr;
  }

  /// Copies a scalar value into a scalar target; anything else cannot be stored without a map.
  Value store(const TargetPtr& dest, const Value& v) {
    if (dest->type.is_vector())
      return store_vector(dest, v);
    const ScalarValue* s = as_scalar(v);
    if (!s || !dest->type.is_scalar())
      throw UserError(fmt::format("cannot store a value of type {} directly: compute it with a "
                                  "map (e.g. mapSeq(id))",
                                  type_of(v).to_string()),
                      loc_);
    emit(fmt::format("{} = {};", dest->lvalue, s->text));
    record_loads(*s);
    if (dest->element)
      record_access(*dest->element);
    return target_value(dest);
  }

  /// A vector into a vector target: one vector store when the target is consecutive memory,
  /// component by component otherwise.
  Value store_vector(const TargetPtr& dest, const Value& v) {
    const ScalarValue* s = as_scalar(v);
    const int width = dest->type.as<ir::VectorType>()->width;
    LIFTX_INTERNAL_CHECK(s && s->width == width, "storing {} into a vector of {}",
                         type_of(v).to_string(), width);
    if (!dest->element) {
      for (int k = 0; k < width; ++k)
        store(dest->components[static_cast<size_t>(k)], s->parts[static_cast<size_t>(k)]);
      return target_value(dest);
    }
    if (!dest->lvalue.empty())
      emit(fmt::format("{} = {};", dest->lvalue, s->text));
    else
      emit(fmt::format("vstore{}({}, 0, {});", width, s->text, dest->pointer));
    record_loads(*s);
    record_access(*dest->element);
    return v;
  }

  // ---- access records (for features) -----------------------------------------------------------
  std::vector<LoopContext> loop_contexts() const {
    std::vector<LoopContext> out;
    for (const LoopFrame& f : loops_)
      out.push_back({f.primitive, f.dim, f.kind, f.var, f.trip});
    return out;
  }
  void record_access(MemoryAccess access) {
    access.loops = loop_contexts();
    const size_t slot = kernel_.accesses.size();
    if (options_.instrument) {
      count_slot(std::to_string(slot));
      std::string first = fmt::format("liftx_first_index[liftx_wi * LIFTX_ACCESSES + {}]", slot);
      emit(fmt::format("if ({} < 0) {} = {};", first, first, arith::to_c(access.index)));
    }
    kernel_.accesses.push_back(std::move(access));
  }
  /// Records the statement's reads and the user functions it calls.
  void record_loads(const ScalarValue& v) {
    for (const Load& load : v.loads)
      record_access(load);
    for (const ir::UserFunPtr& f : v.calls)
      kernel_.calls.push_back({f, loop_contexts()});
  }
  void emit_barrier(bool local_fence, bool global_fence) {
    emit_stmt({cl::Barrier{local_fence, global_fence}});
    count_slot(fmt::format("LIFTX_BARRIER_SLOT({})", kernel_.barriers.size()));
    kernel_.barriers.push_back({local_fence, global_fence, loop_contexts()});
  }
  /// Instrumented kernels: one more execution of `slot` by this work-item.
  void count_slot(const std::string& slot) {
    if (options_.instrument)
      emit(fmt::format("liftx_counts[liftx_wi * LIFTX_SLOTS + {}] += 1;", slot));
  }

  static std::vector<Value> spread(std::vector<Value> args, size_t arity) {
    if (arity >= 2 && args.size() == 1)
      if (const TupleValue* t = as_tuple(args[0]); t && t->elements.size() == arity)
        return t->elements;
    return args;
  }

  Value apply(const ir::Fun& f, std::vector<Value> args, const TargetPtr& dest,
              const ir::Type& result) {
    return std::visit(
        [&](const auto& node) -> Value {
          using N = std::decay_t<decltype(node)>;
          if constexpr (std::is_same_v<N, ir::Lambda>) {
            args = spread(std::move(args), node.params.size());
            for (size_t i = 0; i < node.params.size(); ++i)
              env_[node.params[i].template as<ir::Param>()->id] = args.at(i);
            return eval(node.body, dest);
          } else if constexpr (std::is_same_v<N, ir::UserFun>) {
            args = spread(std::move(args), node.def->params().size());
            if (std::optional<Value> folded = fold_constant_call(*node.def, args))
              return dest ? store(dest, *folded) : *folded;
            used_userfuns_.emplace(node.def->name(), node.def);
            std::string text = node.def->name() + "(";
            std::vector<Load> loads;
            std::vector<ir::UserFunPtr> calls = {node.def};
            for (size_t i = 0; i < args.size(); ++i) {
              const ScalarValue* s = as_scalar(args[i]);
              LIFTX_INTERNAL_CHECK(s, "user function {} given a non-scalar", node.def->name());
              text += (i ? ", " : "") + s->text;
              loads.insert(loads.end(), s->loads.begin(), s->loads.end());
              calls.insert(calls.end(), s->calls.begin(), s->calls.end());
            }
            Value v =
                ScalarValue{text + ")", node.def->result(), std::move(loads), std::move(calls)};
            return dest ? store(dest, v) : v;
          } else if constexpr (std::is_same_v<N, ir::Id>) {
            return dest ? store(dest, args.at(0)) : args.at(0);
          } else if constexpr (std::is_same_v<N, ir::Map>) {
            if (computes(node.f))
              throw UserError("map is not lowered: use mapGlb, mapWrg with mapLcl, or mapSeq",
                              loc_);
            return layout_result(lazy_map(node.f, args.at(0), result), dest);
          } else if constexpr (std::is_same_v<N, ir::MapSeq>) {
            return emit_map(Level::Seq, 0, node.f, args.at(0), dest, result);
          } else if constexpr (std::is_same_v<N, ir::MapGlb>) {
            return emit_map(Level::Glb, node.dim, node.f, args.at(0), dest, result);
          } else if constexpr (std::is_same_v<N, ir::MapWrg>) {
            return emit_map(Level::Wrg, node.dim, node.f, args.at(0), dest, result);
          } else if constexpr (std::is_same_v<N, ir::MapLcl>) {
            return emit_map(Level::Lcl, node.dim, node.f, args.at(0), dest, result);
          } else if constexpr (std::is_same_v<N, ir::Reduce>) {
            throw UserError("reduce is not lowered: use reduceSeq", loc_);
          } else if constexpr (std::is_same_v<N, ir::ReduceSeq>) {
            return emit_reduce(node.f, node.init, args.at(0), dest, result);
          } else if constexpr (std::is_same_v<N, ir::Iterate>) {
            return emit_iterate(node, args.at(0), dest, result);
          } else if constexpr (std::is_same_v<N, ir::Zip>) {
            return layout_result(
                zip_view(
                    spread(
                        std::move(args),
                        result.as<ir::ArrayType>()->element.as<ir::TupleType>()->elements.size()),
                    result),
                dest);
          } else if constexpr (std::is_same_v<N, ir::Split>) {
            return layout_result(split_view(args.at(0), node.chunk, result), dest);
          } else if constexpr (std::is_same_v<N, ir::Join>) {
            return layout_result(join_view(args.at(0), result), dest);
          } else if constexpr (std::is_same_v<N, ir::Slide>) {
            return layout_result(slide_view(args.at(0), node.size, node.step, result), dest);
          } else if constexpr (std::is_same_v<N, ir::Pad>) {
            return layout_result(pad_view(args.at(0), node.left, node.right, node.boundary, result),
                                 dest);
          } else if constexpr (std::is_same_v<N, ir::Transpose>) {
            return layout_result(transpose_view(args.at(0), result), dest);
          } else if constexpr (std::is_same_v<N, ir::At>) {
            const ArrayValue* a = as_array(args.at(0));
            LIFTX_INTERNAL_CHECK(a, "at of a non-array");
            return layout_result(a->at(node.index), dest);
          } else if constexpr (std::is_same_v<N, ir::Get>) {
            const TupleValue* t = as_tuple(args.at(0));
            LIFTX_INTERNAL_CHECK(t, "get of a non-tuple");
            return layout_result(t->elements.at(static_cast<size_t>(node.index)), dest);
          } else if constexpr (std::is_same_v<N, ir::Generate>) {
            return layout_result(generate_view(node.f, node.length, result), dest);
          } else if constexpr (std::is_same_v<N, ir::ToGlobal>) {
            return with_space(AddressSpace::Global, node.f, std::move(args), dest, result);
          } else if constexpr (std::is_same_v<N, ir::ToLocal>) {
            return with_space(AddressSpace::Local, node.f, std::move(args), dest, result);
          } else if constexpr (std::is_same_v<N, ir::ToPrivate>) {
            return with_space(AddressSpace::Private, node.f, std::move(args), dest, result);
          } else if constexpr (std::is_same_v<N, ir::AsVector>) {
            return layout_result(as_vector_view(args.at(0), node.width, result, divisors_), dest);
          } else if constexpr (std::is_same_v<N, ir::AsScalar>) {
            const int width = args_width(args.at(0));
            return layout_result(as_scalar_view(args.at(0), width, result), dest);
          } else if constexpr (std::is_same_v<N, ir::Vectorize>) {
            return apply_vectorized(node, std::move(args), dest);
          } else if constexpr (std::is_same_v<N, ir::MapSeqSlide>) {
            return emit_slide_window(node, args.at(0), dest, result);
          }
        },
        f.data().node);
  }

  Value layout_result(const Value& v, const TargetPtr& dest) { return dest ? store(dest, v) : v; }

  static int args_width(const Value& array) {
    const ArrayValue* a = as_array(array);
    LIFTX_INTERNAL_CHECK(a, "asScalar of a non-array");
    const auto* v = a->type.as<ir::ArrayType>()->element.as<ir::VectorType>();
    LIFTX_INTERNAL_CHECK(v, "asScalar of an array of {}", a->type.to_string());
    return v->width;
  }

  /// vectorize(w, f): f applied per component (GPUs compute vectors component-wise anyway; the
  /// vector exists for its loads and stores).
  Value apply_vectorized(const ir::Vectorize& node, std::vector<Value> args,
                         const TargetPtr& dest) {
    const ir::UserFunDef& def = *node.f.as<ir::UserFun>()->def;
    args = spread(std::move(args), def.params().size());
    std::vector<ScalarValue> parts;
    for (int k = 0; k < node.width; ++k) {
      std::vector<Value> components;
      for (const Value& a : args) {
        const ScalarValue* s = as_scalar(a);
        LIFTX_INTERNAL_CHECK(s && s->width == node.width, "vectorize given a non-vector");
        components.push_back(s->parts[static_cast<size_t>(k)]);
      }
      parts.push_back(std::get<ScalarValue>(
          apply(node.f, std::move(components), nullptr, ir::Type::scalar(def.result()))));
    }
    Value v = vector_of(std::move(parts), divisors_);
    return dest ? store(dest, v) : v;
  }

  Value with_space(AddressSpace space, const ir::Fun& f, std::vector<Value> args,
                   const TargetPtr& dest, const ir::Type& result) {
    std::optional<AddressSpace> saved = write_space_;
    write_space_ = space;
    Value v = apply(f, std::move(args), dest, result);
    write_space_ = saved;
    return v;
  }

  Value lazy_map(const ir::Fun& f, const Value& x, const ir::Type& result) {
    auto input = std::get<std::shared_ptr<const ArrayValue>>(x);
    ir::Type element = result.as<ir::ArrayType>()->element;
    return make_array(
        result,
        [this, f, input, element](const arith::Expr& i) {
          return apply(f, {input->at(i)}, nullptr, element);
        },
        input->reads_private);
  }

  Value generate_view(const ir::Fun& f, const arith::Expr& length, const ir::Type& result) {
    ir::Type element = result.as<ir::ArrayType>()->element;
    return make_array(result, [this, f, length, element](const arith::Expr& i) {
      auto index_value = [](const arith::Expr& e) {
        ScalarValue v{arith::to_c(e), ir::ScalarKind::Int};
        if (std::optional<int64_t> c = e.as_constant(); c && *c >= INT32_MIN && *c <= INT32_MAX)
          v.constant = ir::Scalar(static_cast<int32_t>(*c));
        return v;
      };
      std::vector<Value> indices = {index_value(i), index_value(length)};
      return apply(f, std::move(indices), nullptr, element);
    });
  }

  /// A user function applied to constants is evaluated now (user functions are pure): weights
  /// generated from indices become literals once the loop reading them is unrolled.
  static std::optional<Value> fold_constant_call(const ir::UserFunDef& def,
                                                 const std::vector<Value>& args) {
    std::vector<ir::Scalar> scalars;
    for (size_t k = 0; k < args.size(); ++k) {
      const ScalarValue* s = as_scalar(args[k]);
      if (!s || !s->constant || s->width != 1)
        return std::nullopt;
      scalars.push_back(ir::convert(*s->constant, def.params().at(k).kind));
    }
    try {
      ir::Scalar r = def.evaluate(scalars);
      ScalarValue v{ir::literal_text(r), ir::kind_of(r)};
      v.constant = r;
      return Value(v);
    } catch (const UserError&) {
      return std::nullopt; // e.g. a division by zero: left to run time, as written
    }
  }

  // ---- memory ---------------------------------------------------------------------------------
  /// A buffer for one value of `type`: `name[offset ...]` in `space`.
  struct Allocation {
    std::string name;
    arith::Expr offset;
    AddressSpace space;
    ir::ScalarKind kind;
  };

  Allocation allocate_array(const ir::Type& type, AddressSpace space, const std::string& writer) {
    ir::ScalarKind kind = memory_kind(type, writer.c_str());
    arith::Expr count = scalar_count(type);
    if (space == AddressSpace::Private) {
      std::optional<int64_t> n = count.as_constant();
      if (!n)
        throw UserError(fmt::format("{}: private memory needs a constant size, got {} elements; "
                                    "use toLocal or toGlobal",
                                    writer, count.to_string()),
                        loc_);
      std::string name = fresh("priv");
      emit(fmt::format("{} {}[{}];", ir::scalar_name(kind), name, *n));
      private_arrays_.emplace_back(name, *n);
      kernel_.private_bytes += *n * static_cast<int64_t>(scalar_bytes(kind));
      return {name, arith::Expr(0), space, kind};
    }
    // Local memory is per work-group: regions for the loops inside the innermost mapWrg. Global
    // memory is per kernel: regions for every enclosing loop.
    size_t first = 0;
    if (space == AddressSpace::Local) {
      auto wrg = std::find_if(loops_.rbegin(), loops_.rend(),
                              [](const LoopFrame& f) { return f.level == Level::Wrg; });
      if (wrg == loops_.rend())
        throw UserError(fmt::format("{}: toLocal outside mapWrg: local memory belongs to a "
                                    "work-group",
                                    writer),
                        loc_);
      first = static_cast<size_t>(loops_.rend() - wrg);
    }
    arith::Expr regions(1);
    arith::Expr region(0);
    for (size_t k = first; k < loops_.size(); ++k) {
      region = region * loops_[k].trip + loops_[k].var;
      regions = regions * loops_[k].trip;
    }
    std::string name = fresh(space == AddressSpace::Local ? "lcl" : "tmp");
    kernel_.args.push_back(
        {space == AddressSpace::Local ? KernelArg::Role::Local : KernelArg::Role::Temporary, name,
         kind, regions * count, -1, loc_});
    return {name, region * count, space, kind};
  }

  TargetPtr allocate(const ir::Type& type, AddressSpace space, const std::string& writer) {
    if (space == AddressSpace::Private && type.is_scalar()) {
      ir::ScalarKind kind = type.as<ir::ScalarType>()->kind;
      std::string name = fresh("priv");
      emit(fmt::format("{} {};", ir::scalar_name(kind), name));
      kernel_.private_bytes += static_cast<int64_t>(scalar_bytes(kind));
      auto t = std::make_shared<Target>();
      t->type = type;
      t->space = space;
      t->lvalue = name;
      return t;
    }
    Allocation a = allocate_array(type, space, writer);
    return memory_target(a.name, type, a.offset, space);
  }

  // ---- iterate ----------------------------------------------------------------------------------
  /// iterate(k, f): the first application reads the input and writes buffer A; the others
  /// alternate between A and B through two swapped pointers; the last one writes the destination
  /// when there is one. Work-items synchronise between applications when the buffers are shared.
  Value emit_iterate(const ir::Iterate& node, const Value& x, const TargetPtr& dest,
                     const ir::Type& result) {
    std::optional<int64_t> count = node.count.as_constant();
    LIFTX_INTERNAL_CHECK(count && *count >= 0, "iterate count must be a constant");
    if (*count == 0)
      return layout_result(x, dest);
    const bool in_wrg = std::any_of(loops_.begin(), loops_.end(),
                                    [](const LoopFrame& f) { return f.level == Level::Wrg; });
    const bool in_thread = std::any_of(loops_.begin(), loops_.end(), [](const LoopFrame& f) {
      return f.level == Level::Glb || f.level == Level::Lcl;
    });
    if (!in_wrg && !in_thread)
      throw UserError("iterate over a whole kernel needs a global synchronisation between "
                      "iterations: put it inside mapWrg (local memory) or inside a work-item's "
                      "own computation",
                      loc_);
    if (!result.is_array())
      throw NotImplemented("iterate over a scalar in generated code");
    AddressSpace space =
        write_space_.value_or(in_thread ? AddressSpace::Private : AddressSpace::Local);
    if (space == AddressSpace::Global && !in_thread)
      throw UserError("iterate: work-groups share global buffers only through local "
                      "synchronisation; use toLocal",
                      loc_);
    const bool shared = space != AddressSpace::Private;
    auto sync = [&] {
      if (shared && !in_thread)
        emit_barrier(space == AddressSpace::Local, space == AddressSpace::Global);
    };
    auto run = [&](const Value& in, const TargetPtr& out) {
      std::optional<AddressSpace> saved = write_space_;
      write_space_.reset();
      apply(node.f, {in}, out, result);
      write_space_ = saved;
    };
    if (*count == 1 && dest) {
      run(x, dest);
      return target_value(dest);
    }
    Allocation a = allocate_array(result, space, "iterate");
    Allocation b = allocate_array(result, space, "iterate");
    const bool is_private = space == AddressSpace::Private;
    const std::string qualifier = is_private ? "" : std::string(address_space_name(space)) + " ";
    const std::string scalar = ir::scalar_name(a.kind);
    run(x, memory_target(a.name, result, a.offset, space));
    sync();
    std::string src = fresh("src");
    std::string dst = fresh("dst");
    emit(fmt::format("{}{}* {} = {} + {};", qualifier, scalar, src, a.name, arith::to_c(a.offset)));
    emit(fmt::format("{}{}* {} = {} + {};", qualifier, scalar, dst, b.name, arith::to_c(b.offset)));
    // With a destination the last application writes it; otherwise the result stays in src.
    int64_t looped = dest ? *count - 2 : *count - 1;
    if (looped > 0) {
      std::string it = fresh("it");
      const size_t record = kernel_.loops.size();
      kernel_.loops.push_back(
          {"iterate", cl::LoopKind::For, arith::Expr(looped), loc_, loop_contexts()});
      cl::Block body;
      blocks_.push_back(&body);
      loops_.push_back({Level::Seq, 0, arith::range_var(it, 0, looped), arith::Expr(looped),
                        "iterate", cl::LoopKind::For});
      count_slot(fmt::format("LIFTX_LOOP_SLOT({})", record));
      run(memory_value(src, result, 0, space), memory_target(dst, result, 0, space));
      sync();
      loops_.pop_back();
      emit(fmt::format("{{ {}{}* swap = {}; {} = {}; {} = swap; }}", qualifier, scalar, src, src,
                       dst, dst));
      blocks_.pop_back();
      emit_stmt({cl::For{fmt::format("int {} = 0", it), fmt::format("{} < {}", it, looped),
                         fmt::format("{} += 1", it), std::move(body)}});
    }
    if (dest) {
      run(memory_value(src, result, 0, space), dest);
      return target_value(dest);
    }
    return memory_value(src, result, 0, space);
  }

  // ---- maps and reductions --------------------------------------------------------------------
  void check_nesting(Level level, int dim, const std::string& name) {
    auto inside = [&](Level l, std::optional<int> d) {
      return std::any_of(loops_.begin(), loops_.end(),
                         [&](const LoopFrame& f) { return f.level == l && (!d || f.dim == *d); });
    };
    auto fail = [&](const std::string& why) {
      throw UserError(fmt::format("{} {}", name, why), loc_);
    };
    switch (level) {
    case Level::Glb:
      if (inside(Level::Glb, dim))
        fail(fmt::format("nested inside mapGlb{}", dim));
      if (inside(Level::Wrg, std::nullopt) || inside(Level::Lcl, std::nullopt))
        fail("inside mapWrg/mapLcl");
      used_glb_ = true;
      break;
    case Level::Wrg:
      if (inside(Level::Wrg, dim))
        fail(fmt::format("nested inside mapWrg{}", dim));
      if (inside(Level::Glb, std::nullopt) || inside(Level::Lcl, std::nullopt))
        fail("inside mapGlb/mapLcl");
      used_wrg_ = true;
      break;
    case Level::Lcl:
      if (!inside(Level::Wrg, dim))
        fail(fmt::format("outside mapWrg{}", dim));
      if (inside(Level::Lcl, dim))
        fail(fmt::format("nested inside mapLcl{}", dim));
      break;
    case Level::Seq:
      break;
    }
  }

  cl::LoopKind decide(Level level, int dim, const arith::Expr& trip, bool wants_unroll) {
    if (arith::prove_le(trip, 0))
      return cl::LoopKind::None;
    if (level == Level::Seq) {
      if (arith::prove_eq(trip, 1))
        return cl::LoopKind::Block;
      std::optional<int64_t> n = trip.as_constant();
      if (wants_unroll && n && *n <= kMaxUnroll)
        return cl::LoopKind::Unrolled;
      return cl::LoopKind::For;
    }
    std::optional<arith::Expr> p = workers(level, dim);
    if (p && arith::prove_eq(*p, trip))
      return cl::LoopKind::Block;
    if (p && arith::prove_le(trip, *p))
      return cl::LoopKind::If;
    return cl::LoopKind::For;
  }

  static std::pair<std::string, std::string> start_and_step(Level level, int dim) {
    switch (level) {
    case Level::Glb:
      return {fmt::format("get_global_id({})", dim), fmt::format("get_global_size({})", dim)};
    case Level::Wrg:
      return {fmt::format("get_group_id({})", dim), fmt::format("get_num_groups({})", dim)};
    case Level::Lcl:
      return {fmt::format("get_local_id({})", dim), fmt::format("get_local_size({})", dim)};
    case Level::Seq:
      return {"0", "1"};
    }
    return {"0", "1"};
  }

  /// Emits `body(index)` once per iteration as decided; returns the loop kind.
  cl::LoopKind emit_loop(Level level, int dim, const arith::Expr& trip, bool wants_unroll,
                         const std::string& var_base, const std::string& primitive,
                         const std::function<void(const arith::Expr&)>& body) {
    cl::LoopKind kind = decide(level, dim, trip, wants_unroll);
    auto [start, step] = start_and_step(level, dim);
    const size_t record = kernel_.loops.size();
    kernel_.loops.push_back({primitive, kind, trip, loc_, loop_contexts()});
    auto run_body = [&](cl::Block& block, const arith::Expr& index, const arith::Expr& var) {
      blocks_.push_back(&block);
      loops_.push_back({level, dim, var, trip, primitive, kind});
      count_slot(fmt::format("LIFTX_LOOP_SLOT({})", record));
      body(index);
      loops_.pop_back();
      blocks_.pop_back();
    };
    switch (kind) {
    case cl::LoopKind::None:
      emit_stmt({cl::Comment{fmt::format("{}: no iterations", level_name(level, dim))}});
      break;
    case cl::LoopKind::Unrolled: {
      int64_t n = *trip.as_constant();
      for (int64_t k = 0; k < n; ++k) {
        cl::Scope scope;
        run_body(scope.body, arith::Expr(k), arith::Expr(k));
        emit_stmt({std::move(scope)});
      }
      break;
    }
    case cl::LoopKind::Block:
    case cl::LoopKind::If:
    case cl::LoopKind::For: {
      std::string name = fresh(var_base);
      arith::Expr var = arith::range_var(name, 0, trip);
      cl::Block block;
      if (kind == cl::LoopKind::For) {
        run_body(block, var, var);
        emit_stmt({cl::For{fmt::format("int {} = {}", name, start),
                           fmt::format("{} < {}", name, arith::to_c(trip)),
                           fmt::format("{} += {}", name, step), std::move(block)}});
      } else if (kind == cl::LoopKind::Block && level == Level::Seq) {
        // One sequential iteration: index 0, a constant (private arrays need constant indices).
        run_body(block, arith::Expr(0), arith::Expr(0));
        emit_stmt({cl::Scope{std::move(block)}});
      } else {
        block.stmts.push_back({cl::Line{fmt::format("int {} = {};", name, start)}});
        run_body(block, var, var);
        if (kind == cl::LoopKind::Block)
          emit_stmt({cl::Scope{std::move(block)}});
        else
          emit_stmt({cl::If{fmt::format("{} < {}", start, arith::to_c(trip)), std::move(block)}});
      }
      break;
    }
    }
    return kind;
  }

  Value emit_map(Level level, int dim, const ir::Fun& f, const Value& x, TargetPtr dest,
                 const ir::Type& result) {
    const std::string name = level_name(level, dim);
    check_nesting(level, dim, name);
    auto input = std::get<std::shared_ptr<const ArrayValue>>(x);
    arith::Expr trip = input->type.as<ir::ArrayType>()->length;
    if (level == Level::Glb)
      census_.glb[dim].push_back(trip);
    if (level == Level::Wrg)
      census_.wrg[dim].push_back(trip);
    if (level == Level::Lcl)
      census_.lcl[dim].push_back(trip);
    bool allocated = false;
    if (!dest) {
      if (level == Level::Glb || level == Level::Wrg)
        throw UserError(fmt::format("the result of {} would be read by other threads of the same "
                                    "kernel, which cannot synchronise across work-groups: write "
                                    "it to the program's output or fuse the computations",
                                    name),
                        loc_);
      dest = allocate(result, write_space_.value_or(default_space()), name);
      allocated = true;
    }
    bool wants_unroll = dest->space == AddressSpace::Private || input->reads_private;
    ir::Type result_element = result.as<ir::ArrayType>()->element;
    const size_t loop_record = kernel_.loops.size();
    cl::LoopKind kind = emit_loop(level, dim, trip, wants_unroll,
                                  level == Level::Glb   ? fmt::format("gid{}", dim)
                                  : level == Level::Wrg ? fmt::format("wg{}", dim)
                                  : level == Level::Lcl ? fmt::format("lid{}", dim)
                                                        : std::string("i"),
                                  name, [&](const arith::Expr& index) {
                                    apply(f, {input->at(index)}, dest->at(index), result_element);
                                  });
    // Other threads of the work-group read what this mapLcl wrote: synchronise unless the memory
    // is private. Nested in another mapLcl the barrier sits inside that loop (its consumer, e.g. a
    // reduceSeq, reads every element in the same iteration); launches whose local size would make
    // that loop's trip count differ between work-items are refused (divergent_barrier).
    if (level == Level::Lcl && allocated && dest->space != AddressSpace::Private)
      emit_barrier(dest->space == AddressSpace::Local, dest->space == AddressSpace::Global);
    // A work-group loop that runs more than once reuses its local memory: wait until every
    // thread has finished reading before the next iteration overwrites it.
    if (level == Level::Wrg && kind == cl::LoopKind::For)
      add_loop_end_barrier(loop_record, dim);
    return target_value(dest);
  }

  void add_loop_end_barrier(size_t loop_record, int dim) {
    const LoopRecord wrg_record = kernel_.loops.at(loop_record);
    cl::Stmt& last = current().stmts.back();
    if (auto* loop = std::get_if<cl::For>(&last.node);
        loop && cl::census(loop->body).barriers > 0) {
      loop->body.stmts.push_back({cl::Barrier{true, false}});
      if (options_.instrument)
        loop->body.stmts.push_back({cl::Line{
            fmt::format("liftx_counts[liftx_wi * LIFTX_SLOTS + LIFTX_BARRIER_SLOT({})] += 1;",
                        kernel_.barriers.size())}});
      const LoopRecord& wrg = wrg_record;
      std::vector<LoopContext> context = wrg.enclosing;
      // The barrier runs once per iteration of this loop, whose variable it does not need.
      context.push_back({wrg.primitive, dim, wrg.kind, arith::Expr(0), wrg.trip_count});
      kernel_.barriers.push_back({true, false, std::move(context)});
    }
  }

  /// Where a computation without toGlobal/toLocal/toPrivate writes: global, like Lift's default
  /// that follows the (global) inputs; rewrites choose local or private memory explicitly.
  static AddressSpace default_space() { return AddressSpace::Global; }

  Value emit_reduce(const ir::Fun& f, const ir::Expr& init_expr, const Value& x,
                    const TargetPtr& dest, const ir::Type& result) {
    auto input = std::get<std::shared_ptr<const ArrayValue>>(x);
    Value init = eval(init_expr, nullptr);
    const ScalarValue* init_scalar = as_scalar(init);
    if (!init_scalar)
      throw NotImplemented("reduceSeq with a non-scalar accumulator");
    ir::ScalarKind kind = init_scalar->kind;
    std::string acc = fresh("acc");
    emit(fmt::format("{} {} = {};", ir::scalar_name(kind), acc, init_scalar->text));
    arith::Expr trip = input->type.as<ir::ArrayType>()->length;
    ir::Type acc_type = ir::Type::scalar(kind);
    // Short reductions of a constant length are unrolled: indices become constants, so
    // generated weights fold to literals and private inputs stay in registers.
    std::optional<int64_t> constant_trip = trip.as_constant();
    const bool unroll =
        input->reads_private || (constant_trip && *constant_trip <= kMaxReduceUnroll);
    emit_loop(Level::Seq, 0, trip, unroll, "j", "reduceSeq", [&](const arith::Expr& index) {
      Value next = apply(f, {ScalarValue{acc, kind}, input->at(index)}, nullptr, acc_type);
      const ScalarValue* s = as_scalar(next);
      LIFTX_INTERNAL_CHECK(s, "reduceSeq: the function returned a non-scalar");
      emit(fmt::format("{} = {};", acc, s->text));
      record_loads(*s);
    });
    if (dest) {
      store(dest->at(0), ScalarValue{acc, kind});
      return target_value(dest);
    }
    return make_array(
        result,
        [acc, kind](const arith::Expr&) {
          return ScalarValue{acc, kind};
        },
        true);
  }

  // ---- register sliding windows (mapSeqSlide) ---------------------------------------------------
  /// The scalar kinds of the registers holding one value of `type`, row-major (tuples: their
  /// components in order); nullopt when an array length is not a constant.
  static std::optional<std::vector<ir::ScalarKind>> register_kinds(const ir::Type& type) {
    if (const auto* s = type.as<ir::ScalarType>())
      return std::vector<ir::ScalarKind>{s->kind};
    std::vector<ir::ScalarKind> kinds;
    if (const auto* t = type.as<ir::TupleType>()) {
      for (const ir::Type& e : t->elements) {
        auto inner = register_kinds(e);
        if (!inner)
          return std::nullopt;
        kinds.insert(kinds.end(), inner->begin(), inner->end());
      }
      return kinds;
    }
    const auto* a = type.as<ir::ArrayType>();
    std::optional<int64_t> n = a ? a->length.as_constant() : std::nullopt;
    if (!n)
      return std::nullopt;
    auto inner = register_kinds(a->element);
    if (!inner)
      return std::nullopt;
    for (int64_t i = 0; i < *n; ++i)
      kinds.insert(kinds.end(), inner->begin(), inner->end());
    return kinds;
  }

  /// A value of `type` held in the registers `names[offset ...]` (layout of register_kinds);
  /// array indices must be constants, as they are once the maps reading a window are unrolled.
  Value
  register_value(const ir::Type& type,
                 const std::shared_ptr<std::vector<std::pair<std::string, ir::ScalarKind>>>& names,
                 int64_t offset) {
    if (type.is_scalar()) {
      const auto& [name, kind] = names->at(static_cast<size_t>(offset));
      return ScalarValue{name, kind};
    }
    if (const auto* t = type.as<ir::TupleType>()) {
      auto tuple = std::make_shared<TupleValue>();
      for (const ir::Type& e : t->elements) {
        tuple->elements.push_back(register_value(e, names, offset));
        offset += static_cast<int64_t>(register_kinds(e)->size());
      }
      return tuple;
    }
    ir::Type element = type.as<ir::ArrayType>()->element;
    const auto stride = static_cast<int64_t>(register_kinds(element)->size());
    return make_array(
        type,
        [this, element, names, offset, stride](const arith::Expr& i) {
          std::optional<int64_t> k = i.as_constant();
          if (!k)
            throw UserError(fmt::format("mapSeqSlide: the window is read at index {}, which is "
                                        "not a constant (registers need constant indices: read "
                                        "it with mapSeq, which is unrolled)",
                                        arith::to_c(i)),
                            loc_);
          return register_value(element, names, offset + *k * stride);
        },
        true);
  }

  /// The scalars of a value of constant size, in the layout of register_kinds.
  void flatten(const Value& v, std::vector<ScalarValue>& out) {
    if (const ScalarValue* s = as_scalar(v)) {
      LIFTX_INTERNAL_CHECK(s->width == 1, "flattening a vector");
      out.push_back(*s);
      return;
    }
    if (const TupleValue* t = as_tuple(v)) {
      for (const Value& e : t->elements)
        flatten(e, out);
      return;
    }
    const ArrayValue* a = as_array(v);
    const int64_t n = *a->type.as<ir::ArrayType>()->length.as_constant();
    for (int64_t i = 0; i < n; ++i)
      flatten(a->at(arith::Expr(i)), out);
  }

  /// Copies `parts` into the registers `names`: runs of consecutive, aligned global elements with
  /// one vector load each, the rest one by one.
  void load_registers(const std::vector<ScalarValue>& parts,
                      const std::vector<std::string>& names) {
    static constexpr const char* kComponents = "0123456789abcdef";
    size_t j = 0;
    while (j < parts.size()) {
      const Load* first = direct_load(parts[j]);
      size_t run = 0;
      if (first && first->space == AddressSpace::Global) {
        run = 1;
        while (j + run < parts.size() && run < 16) {
          const Load* next = direct_load(parts[j + run]);
          if (!next || next->buffer != first->buffer || next->space != first->space ||
              !arith::prove_eq(next->index - first->index, arith::Expr(int64_t(run))))
            break;
          ++run;
        }
      }
      int width = 0;
      for (int w : {16, 8, 4, 2})
        if (size_t(w) <= run && provably_aligned(first->index, w, divisors_)) {
          width = w;
          break;
        }
      if (width == 0) {
        emit(fmt::format("{} = {};", names[j], parts[j].text));
        record_loads(parts[j]);
        ++j;
        continue;
      }
      std::vector<ScalarValue> group(parts.begin() + long(j), parts.begin() + long(j) + width);
      ScalarValue vector = vector_of(std::move(group), divisors_);
      std::string temp = fresh("v");
      emit(
          fmt::format("const {} {} = {};", value_type_name(vector.kind, width), temp, vector.text));
      record_loads(vector);
      for (int k = 0; k < width; ++k)
        emit(fmt::format("{} = {}.s{};", names[j + size_t(k)], temp, kComponents[k]));
      j += size_t(width);
    }
  }

  /// mapSeqSlide(f, size, step): the window lives in registers; the first size - step elements
  /// are loaded once, then each step loads `step` new elements, applies f and rotates.
  Value emit_slide_window(const ir::MapSeqSlide& node, const Value& x, TargetPtr dest,
                          const ir::Type& result) {
    auto input = std::get<std::shared_ptr<const ArrayValue>>(x);
    std::optional<int64_t> size = node.size.as_constant();
    std::optional<int64_t> step = node.step.as_constant();
    if (!size || !step)
      throw UserError(fmt::format("mapSeqSlide: the window size and step must be constants, got "
                                  "{} and {}",
                                  node.size.to_string(), node.step.to_string()),
                      loc_);
    if (*step > *size)
      throw UserError(
          fmt::format("mapSeqSlide: step {} is larger than the window {}", *step, *size), loc_);
    ir::Type element = input->type.as<ir::ArrayType>()->element;
    std::optional<std::vector<ir::ScalarKind>> kinds = register_kinds(element);
    if (!kinds || *size * static_cast<int64_t>(kinds->size()) > kMaxWindowRegisters)
      throw UserError(fmt::format("mapSeqSlide: a window of {} elements of type {} does not fit "
                                  "in {} registers",
                                  *size, element.to_string(), kMaxWindowRegisters),
                      loc_);
    if (!dest)
      dest = allocate(result, write_space_.value_or(default_space()), "mapSeqSlide");
    const std::string base = fresh("win");
    auto names = std::make_shared<std::vector<std::pair<std::string, ir::ScalarKind>>>();
    std::vector<std::vector<std::string>> slots(static_cast<size_t>(*size));
    int64_t window_bytes = 0;
    for (int64_t k = 0; k < *size; ++k) {
      // One declaration per slot and run of equal kinds: `float win_3_1_0, win_3_1_1, ...;`.
      std::string line;
      for (size_t j = 0; j < kinds->size(); ++j) {
        std::string name = fmt::format("{}_{}_{}", base, k, j);
        if (j == 0 || (*kinds)[j] != (*kinds)[j - 1]) {
          if (!line.empty())
            emit(line + ";");
          line = fmt::format("{} {}", ir::scalar_name((*kinds)[j]), name);
        } else {
          line += ", " + name;
        }
        slots[size_t(k)].push_back(name);
        names->emplace_back(name, (*kinds)[j]);
        window_bytes += static_cast<int64_t>(scalar_bytes((*kinds)[j]));
      }
      if (!line.empty())
        emit(line + ";");
    }
    kernel_.private_bytes += window_bytes;
    kernel_.window_bytes += window_bytes;
    ir::Type window_type = ir::Type::array(element, node.size);
    Value window = register_value(window_type, names, 0);
    auto load_slot = [&](int64_t slot, const Value& v) {
      std::vector<ScalarValue> parts;
      flatten(v, parts);
      load_registers(parts, slots[size_t(slot)]);
    };
    const int64_t keep = *size - *step;
    for (int64_t k = 0; k < keep; ++k)
      load_slot(k, input->at(arith::Expr(k)));
    arith::Expr trip = result.as<ir::ArrayType>()->length;
    ir::Type result_element = result.as<ir::ArrayType>()->element;
    // The steps stay a loop, kept rolled: unrolled, all steps' loads are issued at once, which
    // on an H200 cost a hand-written float4 window 15-30% of its bandwidth.
    const cl::LoopKind kind =
        emit_loop(Level::Seq, 0, trip, false, "s", "mapSeqSlide", [&](const arith::Expr& index) {
          for (int64_t k = 0; k < *step; ++k)
            load_slot(keep + k, input->at(index * *step + keep + k));
          apply(node.f, {window}, dest->at(index), result_element);
          for (int64_t k = 0; k < keep; ++k)
            for (size_t j = 0; j < slots[size_t(k)].size(); ++j)
              emit(fmt::format("{} = {};", slots[size_t(k)][j], slots[size_t(k + *step)][j]));
        });
    if (kind == cl::LoopKind::For)
      current().stmts.insert(current().stmts.end() - 1, {cl::Line{"#pragma unroll 1"}});
    return target_value(dest);
  }

  /// Private arrays read and written only at constant indices become scalar variables (`p[2]` ->
  /// `p_2`), which every OpenCL compiler keeps in registers.
  std::string scalarise_private_arrays(std::string body) const {
    auto is_ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (const auto& [name, count] : private_arrays_) {
      // Every use of the name, as a whole identifier; each must be `name[<digits>]`.
      std::vector<std::pair<size_t, size_t>> uses; // (start, length of `name[k]`)
      bool constant = true;
      for (size_t at = body.find(name); at != std::string::npos && constant;
           at = body.find(name, at + 1)) {
        const size_t end = at + name.size();
        if ((at > 0 && is_ident(body[at - 1])) || (end < body.size() && is_ident(body[end])))
          continue;
        size_t close = end < body.size() && body[end] == '[' ? body.find(']', end) : end;
        const bool digits = close != end && close != std::string::npos && close > end + 1 &&
                            std::all_of(body.begin() + long(end) + 1, body.begin() + long(close),
                                        [](char c) { return c >= '0' && c <= '9'; });
        constant = digits;
        uses.emplace_back(at, close + 1 - at);
      }
      if (!constant || uses.empty())
        continue;
      // The first use is the declaration `T name[count];` (emitted before any access).
      std::string rebuilt;
      size_t copied = 0;
      for (size_t u = 0; u < uses.size(); ++u) {
        const auto [at, length] = uses[u];
        rebuilt.append(body, copied, at - copied);
        const std::string index = body.substr(at + name.size() + 1, length - name.size() - 2);
        if (u == 0) {
          rebuilt += name + "_0";
          for (int64_t k = 1; k < count; ++k)
            rebuilt += fmt::format(", {}_{}", name, k);
        } else {
          rebuilt += name + "_" + index;
        }
        copied = at + length;
      }
      rebuilt.append(body, copied, std::string::npos);
      body = std::move(rebuilt);
    }
    return body;
  }

  // ---- assembly -------------------------------------------------------------------------------
  void finish() {
    if (options_.instrument) {
      Instrumentation inst{static_cast<int>(kernel_.accesses.size()),
                           static_cast<int>(kernel_.barriers.size()),
                           static_cast<int>(kernel_.loops.size())};
      kernel_.instrumentation = inst;
      kernel_.args.push_back({KernelArg::Role::Counters,
                              "liftx_counts",
                              ir::ScalarKind::Int,
                              arith::Expr(inst.slots()),
                              -1,
                              {}});
      kernel_.args.push_back({KernelArg::Role::FirstIndex,
                              "liftx_first_index",
                              ir::ScalarKind::Int,
                              arith::Expr(inst.access_slots),
                              -1,
                              {}});
    }
    // The kernel is named after the program, unless that name is taken by one of its user
    // functions or by OpenCL C itself.
    while (used_userfuns_.count(kernel_.name) || ir::is_reserved_in_opencl(kernel_.name))
      kernel_.name += "_kernel";
    // Sizes are kernel arguments, after the buffers, sorted by name.
    for (const arith::Expr& v : program_.size_vars())
      kernel_.args.push_back(
          {KernelArg::Role::Size, v.node().name, ir::ScalarKind::Int, arith::Expr(1), -1, {}});
    std::string source;
    for (const auto& [name, def] : used_userfuns_)
      source += def->to_opencl() + "\n\n";
    std::string params;
    for (const KernelArg& a : kernel_.args) {
      std::string decl;
      switch (a.role) {
      case KernelArg::Role::Input:
        decl = fmt::format("const global {}* restrict {}", ir::scalar_name(a.kind), a.name);
        break;
      case KernelArg::Role::Output:
      case KernelArg::Role::Temporary:
        decl = fmt::format("global {}* {}", ir::scalar_name(a.kind), a.name);
        break;
      case KernelArg::Role::Local:
        decl = fmt::format("local {}* {}", ir::scalar_name(a.kind), a.name);
        break;
      case KernelArg::Role::Size:
        decl = fmt::format("int {}", a.name);
        break;
      case KernelArg::Role::Counters:
      case KernelArg::Role::FirstIndex:
        decl = fmt::format("global int* {}", a.name);
        break;
      }
      params += fmt::format("{}\n    {}", params.empty() ? "" : ",", decl);
    }
    std::string preamble;
    if (const auto& inst = kernel_.instrumentation) {
      source += fmt::format("#define LIFTX_ACCESSES {}\n#define LIFTX_SLOTS {}\n"
                            "#define LIFTX_BARRIER_SLOT(k) ({} + (k))\n"
                            "#define LIFTX_LOOP_SLOT(k) ({} + (k))\n\n",
                            inst->access_slots, inst->slots(), inst->access_slots,
                            inst->access_slots + inst->barrier_slots);
      preamble =
          "  const int liftx_wi = get_global_id(0) + get_global_size(0) * (get_global_id(1) + "
          "get_global_size(1) * get_global_id(2));\n";
    }
    source += fmt::format("kernel void {}({}) {{\n{}{}}}\n", kernel_.name, params, preamble,
                          scalarise_private_arrays(cl::print(body_, 1)));
    for (const auto& [name, divisor] : divisors_)
      kernel_.size_divisors.emplace_back(name, divisor);
    kernel_.source = std::move(source);
    kernel_.census = cl::census(body_);
  }

  static constexpr int64_t kMaxUnroll = 64;
  /// Registers a sliding window may hold (window size x scalars per element).
  static constexpr int64_t kMaxWindowRegisters = 512;
  /// mapSeqSlide loops up to this many steps are unrolled (the window rotation then costs no
  /// register moves).
  /// Reductions over at most this many elements are unrolled.
  static constexpr int64_t kMaxReduceUnroll = 32;
  SizeDivisors divisors_;
  std::vector<std::pair<std::string, int64_t>> private_arrays_;

  const ir::Program& program_;
  Options options_;
  const LengthCensus* lengths_;
  LengthCensus census_;
  Kernel kernel_;
  cl::Block body_;
  std::vector<cl::Block*> blocks_;
  std::unordered_map<uint64_t, Value> env_;
  std::vector<LoopFrame> loops_;
  std::optional<AddressSpace> write_space_;
  SourceLoc loc_;
  std::set<std::string> reserved_;
  std::map<std::string, ir::UserFunPtr> used_userfuns_;
  int counter_ = 0;
  bool used_glb_ = false;
  bool used_wrg_ = false;
};

} // namespace

Kernel generate(const ir::Program& program, const Options& options) {
  // First pass: which lengths each parallel level maps over (decides the launch rule).
  Generator census_pass(program, options, nullptr);
  census_pass.run();
  LengthCensus lengths = census_pass.census();
  return Generator(program, options, &lengths).run();
}

} // namespace liftx::codegen
