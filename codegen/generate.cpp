// The code generator's entry point, its evaluation of expressions and its per-node dispatch. The
// program is walked once per phase (a first pass collects the mapped lengths that decide the
// launch rule, the second emits); the concerns each node needs live in the gen_*.cpp files
// (generator.hpp lists them).
#include "codegen/generator.hpp"
#include "ir/host_iteration.hpp"
#include "ir/storage.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

namespace liftx::codegen {

// ---- helpers shared by the generator's files ----------------------------------------------------

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

namespace {

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

/// One tuple argument passed to a function of k >= 2 parameters provides its components.
std::vector<Value> spread(std::vector<Value> args, size_t arity) {
  if (arity >= 2 && args.size() == 1)
    if (const TupleValue* t = as_tuple(args[0]); t && t->elements.size() == arity)
      return t->elements;
  return args;
}

int args_width(const Value& array) {
  const ArrayValue* a = as_array(array);
  LIFTX_INTERNAL_CHECK(a, "asScalar of a non-array");
  const auto* v = a->type.as<ir::ArrayType>()->element.as<ir::VectorType>();
  LIFTX_INTERNAL_CHECK(v, "asScalar of an array of {}", a->type.to_string());
  return v->width;
}

/// A user function applied to constants is evaluated now (user functions are pure): weights
/// generated from indices become literals once the loop reading them is unrolled.
std::optional<Value> fold_constant_call(const ir::UserFunDef& def, const std::vector<Value>& args) {
  std::vector<ir::Scalar> scalars;
  for (size_t k = 0; k < args.size(); ++k) {
    const ScalarValue* s = as_scalar(args[k]);
    if (!s || !s->constant || s->width != 1)
      return std::nullopt;
    scalars.push_back(ir::convert(*s->constant, def.params().at(k).kind));
  }
  auto literal = [](const ir::Scalar& r) {
    ScalarValue v{ir::literal_text(r), ir::kind_of(r)};
    v.constant = r;
    return v;
  };
  try {
    if (!def.returns_tuple())
      return Value(literal(def.evaluate(scalars)));
    std::vector<ir::Scalar> results(def.results().size());
    def.evaluate(scalars, results);
    auto tuple = std::make_shared<TupleValue>();
    for (const ir::Scalar& r : results)
      tuple->elements.emplace_back(literal(r));
    return Value(std::move(tuple));
  } catch (const UserError&) {
    return std::nullopt; // e.g. a division by zero: left to run time, as written
  }
}

} // namespace

bool computes(const ir::Fun& f) {
  return computes(&f, nullptr);
}

bool maps_in_parallel(const ir::Fun& f) {
  bool found = false;
  std::function<void(const ir::Fun&)> visit_fun;
  std::function<void(const ir::Expr&)> visit_expr = [&](const ir::Expr& e) {
    ir::for_each_child(e, visit_fun, visit_expr);
  };
  visit_fun = [&](const ir::Fun& g) {
    if (g.as<ir::MapGlb>() || g.as<ir::MapWrg>()) {
      found = true;
      return;
    }
    ir::for_each_child(g, visit_fun, visit_expr);
  };
  visit_fun(f);
  return found;
}

bool computes(const ir::Expr& e) {
  return computes(nullptr, &e);
}

// ---- the generator ------------------------------------------------------------------------------

Generator::Generator(const ir::Program& program, const Options& options,
                     const LengthCensus* lengths)
    : program_(program), options_(options), lengths_(lengths) {
  for (const arith::Expr& v : program.size_vars()) {
    // Sizes keep their names (they are kernel arguments a caller sets by name): one that OpenCL
    // C reserves is refused here, for programs built in C++; the parser refuses it with a
    // location.
    if (ir::is_reserved_in_opencl(v.node().name))
      throw UserError(
          fmt::format("size variable name '{}' is reserved in OpenCL C; rename it", v.node().name),
          program.loc);
    reserved_.insert(v.node().name);
  }
  collect_size_divisors();
  collect_size_conditions();
  if (lengths_)
    decide_launch();
}

Kernel Generator::run() {
  kernel_.name = program_.name;
  blocks_.push_back(&body_);
  bind_parameters();
  ir::Type result = program_.body.type();
  // A result of tuples is stored as one output buffer per component (struct of arrays).
  std::vector<TargetPtr> outputs;
  for (const ir::Type& component : stored_components(result)) {
    ir::ScalarKind kind = memory_kind(component, "the program's result");
    std::string out = fresh("out");
    kernel_.args.push_back({KernelArg::Role::Output, out, kind, scalar_count(component), -1,
                            program_.loc, static_cast<int>(outputs.size())});
    outputs.push_back(memory_target(out, component, 0, AddressSpace::Global));
  }
  if (!computes(program_.body))
    throw UserError(fmt::format("{}: the program's result must be computed by a map (it is "
                                "pure data layout)",
                                program_.name),
                    program_.loc);
  eval(program_.body, zip_targets(result, std::move(outputs)));
  if (used_glb_ && used_wrg_)
    throw UserError("a kernel cannot mix mapGlb with mapWrg/mapLcl", program_.loc);
  assemble();
  return std::move(kernel_);
}

void Generator::emit_stmt(cl::Stmt stmt) {
  blocks_.back()->stmts.push_back(std::move(stmt));
}

std::string Generator::fresh(const std::string& base) {
  const std::string free_base = unreserved_base(base);
  while (true) {
    std::string name = fmt::format("{}_{}", free_base, counter_++);
    if (!ir::is_reserved_in_opencl(name) && reserved_.insert(name).second)
      return name;
  }
}

std::string Generator::reserve(const std::string& wanted) {
  const std::string base = unreserved_base(wanted);
  std::string name = base;
  while (ir::is_reserved_in_opencl(name) || !reserved_.insert(name).second)
    name = fmt::format("{}_{}", base, counter_++);
  return name;
}

std::string Generator::unreserved_base(const std::string& wanted) {
  // A name OpenCL C reserves never names a kernel's variable: the loops above suffix `global`
  // to `global_3`, but no suffix frees a name reserved by its prefix (`liftx_x`, `__x`), so
  // that one gets a prefix first.
  if (ir::is_reserved_in_opencl(wanted) && ir::is_reserved_in_opencl(wanted + "_0"))
    return "v_" + wanted;
  return wanted;
}

namespace {
/// The length of a grid's rows (its innermost arrays).
arith::Expr row_length(const ir::Type& grid) {
  const ir::Type* t = &grid;
  while (true) {
    const auto& a = *t->as<ir::ArrayType>();
    if (a.element.is_scalar())
      return a.length;
    t = &a.element;
  }
}
} // namespace

void Generator::bind_parameters() {
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
    if (std::optional<ir::StoredField> stored = ir::stored_field(program_, i)) {
      // One buffer for the group, added where its first grid (in parameter order) comes.
      const ir::StorageGroup& group = *stored->group;
      auto it = std::find_if(kernel_.args.begin(), kernel_.args.end(), [&](const KernelArg& a) {
        return a.storage && a.storage->fields == group.fields;
      });
      if (it == kernel_.args.end()) {
        std::string name =
            reserve(fmt::format("{}_{}", ir::layout_text(group).substr(0, 5), param->name));
        KernelArg arg{KernelArg::Role::Input,
                      name,
                      memory_kind(t, param->name.c_str()),
                      ir::stored_elements(group, scalar_count(t) / row_length(t), row_length(t)),
                      -1,
                      program_.loc};
        arg.storage = group;
        kernel_.args.push_back(std::move(arg));
        it = std::prev(kernel_.args.end());
      }
      env_[param->id] = stored_field_value(it->name, t, group, stored->field);
      continue;
    }
    std::string name = reserve(param->name);
    kernel_.args.push_back({KernelArg::Role::Input, name, memory_kind(t, param->name.c_str()),
                            scalar_count(t), static_cast<int>(i), program_.loc});
    env_[param->id] = memory_value(name, t, 0, AddressSpace::Global);
  }
}

// ---- evaluation ---------------------------------------------------------------------------------

Value Generator::eval(const ir::Expr& e, const TargetPtr& dest) {
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

Value Generator::eval_call(const ir::Call& call, const ir::Type& result, const TargetPtr& dest) {
  const ir::Fun& f = call.fun;
  if (dest && call.args.size() == 1) {
    // Writes through invertible layout: the argument writes straight into the destination.
    if (TargetPtr inner = invert(f, dest, call.args[0].type())) {
      eval(call.args[0], inner);
      return target_value(dest);
    }
  }
  if (dest && f.as<ir::Tuple>()) {
    // tuple(a, b, ...) landing in a tuple target: each component writes straight into its field.
    std::vector<Value> parts;
    for (size_t k = 0; k < call.args.size(); ++k)
      parts.push_back(eval(call.args[k], dest->fields.at(k)));
    auto tuple = std::make_shared<TupleValue>();
    tuple->elements = std::move(parts);
    return tuple;
  }
  if (dest && f.as<ir::Zip>() && call.args.size() >= 2) {
    // zip(X0, X1, ...) landing in a target: each Xk writes straight into its field.
    std::vector<Value> parts;
    for (size_t k = 0; k < call.args.size(); ++k)
      parts.push_back(eval(call.args[k], unzip_target(dest, k, call.args[k].type())));
    return zip_view(parts, result);
  }
  if (const auto* window = f.as<ir::MapSeqSlide>(); window && call.args.size() == 1) {
    if (std::optional<Value> source = streamed_source(call.args[0]))
      return emit_slide_window(*window, *source, dest, result);
  }
  // A call's arguments are independent: none reads another's result. So the barrier that ends
  // one argument's copy to local memory can wait for the last argument's: a work-group's copies
  // of several tiles then read global memory together, behind one barrier.
  std::vector<Value> args;
  bool barrier_owed = false;
  for (size_t k = 0; k < call.args.size(); ++k) {
    args.push_back(eval(call.args[k], nullptr));
    const bool last = k + 1 == call.args.size();
    if (!last && drop_final_local_barrier())
      barrier_owed = true;
    else if (last && barrier_owed && !ends_with_local_barrier())
      emit_barrier(true, false);
  }
  return apply(f, std::move(args), dest, result);
}

namespace {

/// Whether a window over `arg` reads elements produced as it moves (Generator::streamed_source).
bool produced_as_read(const ir::Expr& arg) {
  const auto* call = arg.as<ir::Call>();
  if (!call)
    return false;
  if (const auto* producer = call->fun.as<ir::Map>())
    return call->args.size() == 1 && codegen::computes(producer->f);
  if (call->fun.as<ir::MapSeqSlide>())
    return call->args.size() == 1;
  return call->fun.as<ir::Zip>() && call->args.size() >= 2 &&
         std::any_of(call->args.begin(), call->args.end(), produced_as_read);
}

} // namespace

std::optional<Value> Generator::streamed_source(const ir::Expr& arg) {
  if (!produced_as_read(arg))
    return std::nullopt;
  const auto& produced = *arg.as<ir::Call>();
  // mapSeqSlide(g, n, s, map(h, x)) with h computing: h's results are produced as they enter
  // the window, each once, in registers (a stream of computed planes: temporal steps in 3D).
  if (const auto* producer = produced.fun.as<ir::Map>())
    return lazy_map(producer->f, eval(produced.args[0], nullptr), arg.type());
  // A window over a window: the inner one steps as the outer one reads.
  if (const auto* inner = produced.fun.as<ir::MapSeqSlide>()) {
    std::optional<Value> source = streamed_source(produced.args[0]);
    return window_stream(*inner, source ? *source : eval(produced.args[0], nullptr), arg.type());
  }
  // zip(stream, ...): the elements of each, read together.
  std::vector<Value> parts;
  for (const ir::Expr& a : produced.args) {
    std::optional<Value> source = streamed_source(a);
    parts.push_back(source ? *source : eval(a, nullptr));
  }
  Value zipped = zip_view(parts, arg.type());
  if (!shares_windows(arg.type().as<ir::ArrayType>()->element))
    return zipped;
  // Streams of a work-group's shared windows: each produced by the window over the zip, read
  // together where they lie.
  // Shared by the functions below, not copied into each (a copy holds the pipeline below it).
  auto sources = std::make_shared<std::vector<SharedSource>>();
  for (const Value& part : parts)
    sources->push_back(shared_source(part));
  SharedSource together;
  together.in_lanes = together.reads_past_end = true;
  for (size_t k = 0; k < parts.size(); ++k) {
    const SharedSource& source = (*sources)[k];
    if (source.slots > 0)
      together.slots = together.slots > 0 ? std::min(together.slots, source.slots) : source.slots;
    // Rows exchanged between lanes need no barrier only if every ring of the zip is in lanes.
    if (source.slots > 0)
      together.in_lanes = together.in_lanes && source.in_lanes;
    together.per_lane = together.per_lane || source.per_lane;
    const auto* call = produced.args[k].as<ir::Call>();
    const bool generated = call && call->fun.as<ir::Generate>();
    together.reads_past_end = together.reads_past_end && (source.reads_past_end || generated);
  }
  together.in_lanes = together.in_lanes && together.slots > 0;
  together.produce = [sources](const arith::Expr& j) {
    for (const SharedSource& source : *sources)
      source.produce(j);
  };
  // They run ahead together where each can.
  if (std::all_of(sources->begin(), sources->end(),
                  [](const SharedSource& source) { return source.ahead && source.prime; })) {
    together.ahead = [sources](const arith::Expr& j) {
      for (const SharedSource& source : *sources)
        source.ahead(j);
    };
    together.prime = [sources](const arith::Expr& j) {
      for (const SharedSource& source : *sources)
        source.prime(j);
    };
  }
  together.view = [sources, parts, type = arg.type()](const arith::Expr& j) {
    std::vector<Value> views;
    for (size_t k = 0; k < parts.size(); ++k)
      views.push_back(make_array(std::get<std::shared_ptr<const ArrayValue>>(parts[k])->type,
                                 (*sources)[k].view, false));
    return std::get<std::shared_ptr<const ArrayValue>>(zip_view(views, type))->at(j);
  };
  register_shared_source(zipped, std::move(together));
  return zipped;
}

Value Generator::apply(const ir::Fun& f, Args args, const TargetPtr& dest, const ir::Type& result) {
  return std::visit(
      [&](const auto& node) { return apply_node(node, std::move(args), dest, result); },
      f.data().node);
}

Value Generator::lazy_map(const ir::Fun& f, const Value& x, const ir::Type& result) {
  auto input = std::get<std::shared_ptr<const ArrayValue>>(x);
  ir::Type element = result.as<ir::ArrayType>()->element;
  return make_array(
      result,
      [this, f, input, element](const arith::Expr& i) {
        return apply(f, {input->at(i)}, nullptr, element);
      },
      input->reads_private);
}

Value Generator::generate_view(const ir::Fun& f, const arith::Expr& length,
                               const ir::Type& result) {
  ir::Type element = result.as<ir::ArrayType>()->element;
  return make_array(result, [this, f, length, element](const arith::Expr& i) {
    auto index_value = [](const arith::Expr& e) {
      ScalarValue v{arith::to_c(e), ir::ScalarKind::Int};
      if (std::optional<int64_t> c = e.as_constant(); c && *c >= INT32_MIN && *c <= INT32_MAX)
        v.constant = ir::Scalar(static_cast<int32_t>(*c));
      return v;
    };
    std::vector<Value> indices = {index_value(i), index_value(length)};
    Value value = apply(f, std::move(indices), nullptr, element);
    if (const auto* call = f.as<ir::UserFun>(); call && call->def->name() == "liftxTileEdge")
      if (const ScalarValue* edge = as_scalar(value))
        tile_edge_calls_.emplace(edge->text, TileEdgeCall{i, length});
    return value;
  });
}

// ---- per-node dispatch --------------------------------------------------------------------------

Value Generator::apply_node(const ir::Lambda& n, Args args, const TargetPtr& dest,
                            const ir::Type&) {
  args = spread(std::move(args), n.params.size());
  for (size_t i = 0; i < n.params.size(); ++i)
    env_[n.params[i].as<ir::Param>()->id] = args.at(i);
  return eval(n.body, dest);
}

Value Generator::apply_node(const ir::UserFun& n, Args args, const TargetPtr& dest,
                            const ir::Type&) {
  args = spread(std::move(args), n.def->params().size());
  if (std::optional<Value> folded = fold_constant_call(*n.def, args))
    return dest ? store(dest, *folded) : *folded;
  used_userfuns_.emplace(n.def->name(), n.def);
  std::string text = n.def->name() + "(";
  std::vector<Load> loads;
  std::vector<ir::UserFunPtr> calls = {n.def};
  for (size_t i = 0; i < args.size(); ++i) {
    const ScalarValue* s = as_scalar(args[i]);
    LIFTX_INTERNAL_CHECK(s, "user function {} given a non-scalar", n.def->name());
    text += (i ? ", " : "") + s->text;
    loads.insert(loads.end(), s->loads.begin(), s->loads.end());
    calls.insert(calls.end(), s->calls.begin(), s->calls.end());
  }
  text += ")";
  if (!n.def->returns_tuple()) {
    Value v = ScalarValue{text, n.def->result(), std::move(loads), std::move(calls)};
    return dest ? store(dest, v) : v;
  }
  // A tuple result is a struct: the call happens here, once, and its reads and operations are
  // recorded here; the components are plain reads of the struct's fields.
  const std::string tuple = fresh("tup");
  emit(fmt::format("{} {} = {};", n.def->tuple_type_name(), tuple, text));
  record_loads(ScalarValue{text, n.def->results().front(), std::move(loads), std::move(calls)});
  auto components = std::make_shared<TupleValue>();
  for (size_t k = 0; k < n.def->results().size(); ++k) {
    const ir::ScalarKind kind = n.def->results()[k];
    kernel_.private_bytes += static_cast<int64_t>(scalar_bytes(kind));
    components->elements.emplace_back(ScalarValue{fmt::format("{}._{}", tuple, k), kind});
  }
  Value v = std::move(components);
  return dest ? store(dest, v) : v;
}

Value Generator::apply_node(const ir::Id&, Args args, const TargetPtr& dest, const ir::Type&) {
  return dest ? store(dest, args.at(0)) : args.at(0);
}

Value Generator::apply_node(const ir::Map& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  if (computes(n.f))
    throw UserError("map is not lowered: use mapGlb, mapWrg with mapLcl, or mapSeq", loc_);
  return layout_result(lazy_map(n.f, args.at(0), result), dest);
}

Value Generator::apply_node(const ir::MapSeq& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return emit_map(Level::Seq, 0, n.f, args.at(0), dest, result);
}

Value Generator::apply_node(const ir::MapGlb& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return emit_map(Level::Glb, n.dim, n.f, args.at(0), dest, result);
}

Value Generator::apply_node(const ir::MapWrg& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return emit_map(Level::Wrg, n.dim, n.f, args.at(0), dest, result);
}

Value Generator::apply_node(const ir::MapLcl& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return emit_map(Level::Lcl, n.dim, n.f, args.at(0), dest, result);
}

Value Generator::apply_node(const ir::Reduce&, Args, const TargetPtr&, const ir::Type&) {
  throw UserError("reduce is not lowered: use reduceSeq", loc_);
}

Value Generator::apply_node(const ir::ReduceSeq& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return emit_reduce(n.f, n.init, args.at(0), dest, result);
}

Value Generator::apply_node(const ir::Iterate& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return emit_iterate(n, args.at(0), dest, result);
}

Value Generator::apply_node(const ir::Zip&, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  const size_t arity = result.as<ir::ArrayType>()->element.as<ir::TupleType>()->elements.size();
  return layout_result(zip_view(spread(std::move(args), arity), result), dest);
}

Value Generator::apply_node(const ir::Tuple&, Args args, const TargetPtr& dest, const ir::Type&) {
  auto tuple = std::make_shared<TupleValue>();
  tuple->elements = std::move(args);
  return layout_result(Value(std::move(tuple)), dest);
}

Value Generator::apply_node(const ir::Split& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return layout_result(split_view(args.at(0), n.chunk, result), dest);
}

Value Generator::apply_node(const ir::Join&, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return layout_result(join_view(args.at(0), result), dest);
}

Value Generator::apply_node(const ir::Slide& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return layout_result(slide_view(args.at(0), n.size, n.step, result), dest);
}

Value Generator::apply_node(const ir::SlideShifted& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return layout_result(slide_shifted_view(args.at(0), n.size, n.step, result), dest);
}

Value Generator::apply_node(const ir::JoinShifted&, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return layout_result(join_shifted_view(args.at(0), result), dest);
}

Value Generator::apply_node(const ir::Pad& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return layout_result(pad_view(args.at(0), n.left, n.right, n.boundary, result), dest);
}

Value Generator::apply_node(const ir::Transpose&, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return layout_result(transpose_view(args.at(0), result), dest);
}

Value Generator::apply_node(const ir::At& n, Args args, const TargetPtr& dest, const ir::Type&) {
  const ArrayValue* a = as_array(args.at(0));
  LIFTX_INTERNAL_CHECK(a, "at of a non-array");
  return layout_result(a->at(n.index), dest);
}

Value Generator::apply_node(const ir::Get& n, Args args, const TargetPtr& dest, const ir::Type&) {
  const TupleValue* t = as_tuple(args.at(0));
  LIFTX_INTERNAL_CHECK(t, "get of a non-tuple");
  return layout_result(t->elements.at(static_cast<size_t>(n.index)), dest);
}

Value Generator::apply_node(const ir::Generate& n, Args, const TargetPtr& dest,
                            const ir::Type& result) {
  return layout_result(generate_view(n.f, n.length, result), dest);
}

Value Generator::apply_node(const ir::ToGlobal& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return with_space(AddressSpace::Global, n.f, std::move(args), dest, result);
}

Value Generator::apply_node(const ir::ToLocal& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return with_space(AddressSpace::Local, n.f, std::move(args), dest, result);
}

Value Generator::apply_node(const ir::ToLocalPadded& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  std::optional<arith::Expr> saved = local_row_padding_;
  local_row_padding_ = n.padding;
  Value v = with_space(AddressSpace::Local, n.f, std::move(args), dest, result);
  local_row_padding_ = saved;
  return v;
}

Value Generator::apply_node(const ir::ToPrivate& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return with_space(AddressSpace::Private, n.f, std::move(args), dest, result);
}

Value Generator::apply_node(const ir::AsVector& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return layout_result(
      as_vector_view(args.at(0), n.width, result, divisors_, &constant_local_buffers_), dest);
}

Value Generator::apply_node(const ir::AsScalar&, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  const int width = args_width(args.at(0));
  return layout_result(as_scalar_view(args.at(0), width, result), dest);
}

/// vectorize(w, f): f applied per component (GPUs compute vectors component-wise anyway; the
/// vector exists for its loads and stores).
Value Generator::apply_node(const ir::Vectorize& n, Args args, const TargetPtr& dest,
                            const ir::Type&) {
  const ir::UserFunDef& def = *n.f.as<ir::UserFun>()->def;
  args = spread(std::move(args), def.params().size());
  std::vector<ScalarValue> parts;
  for (int k = 0; k < n.width; ++k) {
    std::vector<Value> components;
    for (const Value& a : args) {
      const ScalarValue* s = as_scalar(a);
      LIFTX_INTERNAL_CHECK(s && s->width == n.width, "vectorize given a non-vector");
      components.push_back(s->parts[static_cast<size_t>(k)]);
    }
    parts.push_back(std::get<ScalarValue>(
        apply(n.f, std::move(components), nullptr, ir::Type::scalar(def.result()))));
  }
  Value v = vector_of(std::move(parts), divisors_, &constant_local_buffers_);
  return dest ? store(dest, v) : v;
}

Value Generator::apply_node(const ir::MapSeqSlide& n, Args args, const TargetPtr& dest,
                            const ir::Type& result) {
  return emit_slide_window(n, args.at(0), dest, result);
}

// ---- entry point --------------------------------------------------------------------------------

namespace {

Kernel generate_one(const ir::Program& program, const Options& options) {
  // First pass: which lengths each parallel level maps over (decides the launch rule).
  Generator census_pass(program, options, nullptr);
  census_pass.run();
  LengthCensus lengths = census_pass.census();
  return Generator(program, options, &lengths).run();
}

} // namespace

Kernel generate(const ir::Program& program, const Options& options) {
  std::optional<ir::HostIteration> iteration = ir::host_iteration(program);
  if (!iteration)
    return generate_one(program, options);
  const ir::Type& iterated = program.params[iteration->input].type();
  if (stored_components(iterated).size() != 1)
    throw NotImplemented("iterate over several grids at once (a tuple of arrays) on the host");
  if (ir::stored_field(program, iteration->input))
    throw NotImplemented("iterating on the host over a grid stored in a layout group (its two "
                         "buffers would hold the group's other grids too)");
  auto step_kernel = [&](const ir::Program& step, int64_t launches) {
    Kernel kernel = generate_one(step, options);
    kernel.launches = launches;
    kernel.iterated_input = static_cast<int>(iteration->input);
    const bool binds_iterated =
        std::any_of(kernel.args.begin(), kernel.args.end(), [&](const KernelArg& a) {
          return a.role == KernelArg::Role::Input && a.input_index == kernel.iterated_input;
        });
    LIFTX_INTERNAL_CHECK(binds_iterated, "the step kernel of {} has no argument for its input",
                         program.name);
    return kernel;
  };
  Kernel kernel = step_kernel(iteration->step, iteration->count);
  if (iteration->tail_count > 0)
    kernel.tail =
        std::make_shared<const Kernel>(step_kernel(*iteration->tail, iteration->tail_count));
  return kernel;
}

} // namespace liftx::codegen
