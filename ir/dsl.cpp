#include "ir/dsl.hpp"

#include <algorithm>

namespace liftx::dsl {

namespace detail {

std::vector<Type> parameter_types(size_t arity, std::span<const Type> args, const char* what) {
  if (args.size() == arity)
    return {args.begin(), args.end()};
  if (arity >= 2 && args.size() == 1) {
    if (const auto* t = args[0].as<ir::TupleType>(); t && t->elements.size() == arity)
      return t->elements;
  }
  std::string got;
  for (size_t i = 0; i < args.size(); ++i)
    got += (i > 0 ? ", " : "") + args[i].to_string();
  throw UserError(
      fmt::format("{}: expected {} argument{}, got ({})", what, arity, arity == 1 ? "" : "s", got));
}

ir::Fun make_lambda(const std::vector<Type>& types, const std::vector<std::string>& names,
                    const std::function<Expr(const std::vector<Expr>&)>& body) {
  std::vector<Expr> params;
  for (size_t i = 0; i < types.size(); ++i)
    params.push_back(ir::param(types[i], i < names.size() ? names[i] : "x"));
  Expr result = body(params);
  return ir::lambda(std::move(params), std::move(result));
}

} // namespace detail

namespace {

/// The element type of the single array argument of primitive `what`.
Type element_of(const char* what, std::span<const Type> args) {
  LIFTX_USER_CHECK(args.size() == 1, "{}: expected 1 argument, got {}", what, args.size());
  const auto* a = args[0].as<ir::ArrayType>();
  LIFTX_USER_CHECK(a != nullptr, "{}: expected an array, got {}", what, args[0].to_string());
  return a->element;
}

/// A primitive taking one function that is instantiated at the element type.
Fn map_like(const char* what, Fn f, std::function<ir::Fun(ir::Fun)> wrap_fun) {
  return Fn::from_maker(
      [what, f = std::move(f), wrap_fun = std::move(wrap_fun)](std::span<const Type> args) {
        return wrap_fun(f.instantiate({element_of(what, args)}));
      });
}

Fn builtin_by_type(const char* family) {
  return Fn::from_maker([family](std::span<const Type> args) {
    std::vector<Type> operands = detail::parameter_types(2, args, family);
    const auto* a = operands[0].as<ir::ScalarType>();
    const auto* b = operands[1].as<ir::ScalarType>();
    LIFTX_USER_CHECK(a && b && a->kind == b->kind && a->kind != ScalarKind::Bool,
                     "{}: no built-in for argument types ({}, {})", family, operands[0].to_string(),
                     operands[1].to_string());
    std::string name = family;
    if (a->kind == ScalarKind::Int)
      name += "_int";
    if (a->kind == ScalarKind::Double)
      name += "_double";
    ir::UserFunPtr def = ir::UserFunDef::builtin(name);
    LIFTX_INTERNAL_CHECK(def != nullptr, "missing built-in user function {}", name);
    return ir::user_fun(def);
  });
}

std::string trim(std::string_view s) {
  size_t begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos)
    return "";
  size_t end = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(begin, end - begin + 1));
}

} // namespace

// ---- Fn
// ---------------------------------------------------------------------------------------------

Fn::Fn(ir::Fun f) : make_([f = std::move(f)](std::span<const Type>) { return f; }) {}

Fn::Fn(ir::UserFunPtr def) : Fn(ir::user_fun(std::move(def))) {}

Fn Fn::from_maker(Maker make) {
  Fn fn;
  fn.make_ = std::move(make);
  return fn;
}

Expr Fn::apply(std::vector<Expr> args) const {
  std::vector<Type> types;
  for (const Expr& a : args)
    types.push_back(a.type());
  return ir::call(instantiate(types), std::move(args));
}

// ---- types, literals, user functions
// ----------------------------------------------------------------

Type array_of(Type element, std::initializer_list<Size> lengths) {
  Type t = std::move(element);
  for (const Size& n : lengths)
    t = Type::array(t, n.value);
  return t;
}

Expr lit(float v) {
  return ir::literal(v);
}
Expr lit(double v) {
  return ir::literal(v);
}
Expr lit(int v) {
  return ir::literal(int32_t{v});
}
Expr lit(bool v) {
  return ir::literal(v);
}

Fn userfun(std::string name, std::vector<ir::UserFunParam> params, ScalarKind result,
           std::string_view body) {
  // The body trimmed, as the .lift lexer keeps it: a DSL program and the same program read back
  // from its printed text print alike (and so have one identity, e.g. for tuned winners).
  return Fn(ir::UserFunDef::parse(std::move(name), std::move(params), result, trim(body)));
}

Fn userfun(std::string name, std::vector<ir::UserFunParam> params, std::vector<ScalarKind> results,
           std::string_view body) {
  return Fn(
      ir::UserFunDef::parse(std::move(name), std::move(params), std::move(results), trim(body)));
}

const Fn add = builtin_by_type("add");
const Fn mult = builtin_by_type("mult");

// ---- primitives
// ------------------------------------------------------------------------------------

Fn map(Fn f) {
  return map_like("map", std::move(f), [](ir::Fun g) { return ir::map(g); });
}
Expr map(Fn f, Expr x) {
  return map(std::move(f))(x);
}
Fn mapSeq(Fn f) {
  return map_like("mapSeq", std::move(f), [](ir::Fun g) { return ir::map_seq(g); });
}
Expr mapSeq(Fn f, Expr x) {
  return mapSeq(std::move(f))(x);
}
Fn mapGlb(int dim, Fn f) {
  ir::map_glb(dim, ir::id()); // validates dim now, not at instantiation
  return map_like("mapGlb", std::move(f), [dim](ir::Fun g) { return ir::map_glb(dim, g); });
}
Expr mapGlb(int dim, Fn f, Expr x) {
  return mapGlb(dim, std::move(f))(x);
}
Fn mapWrg(int dim, Fn f) {
  ir::map_wrg(dim, ir::id());
  return map_like("mapWrg", std::move(f), [dim](ir::Fun g) { return ir::map_wrg(dim, g); });
}
Expr mapWrg(int dim, Fn f, Expr x) {
  return mapWrg(dim, std::move(f))(x);
}
Fn mapLcl(int dim, Fn f) {
  ir::map_lcl(dim, ir::id());
  return map_like("mapLcl", std::move(f), [dim](ir::Fun g) { return ir::map_lcl(dim, g); });
}
Expr mapLcl(int dim, Fn f, Expr x) {
  return mapLcl(dim, std::move(f))(x);
}

namespace {
Fn reduce_like(const char* what, Fn f, Expr init, bool sequential) {
  return Fn::from_maker([=](std::span<const Type> args) {
    ir::Fun g = f.instantiate({init.type(), element_of(what, args)});
    return sequential ? ir::reduce_seq(g, init) : ir::reduce(g, init);
  });
}
} // namespace

Fn reduce(Fn f, Expr init) {
  return reduce_like("reduce", std::move(f), std::move(init), false);
}
Expr reduce(Fn f, Expr init, Expr x) {
  return reduce(std::move(f), std::move(init))(x);
}
Fn reduceSeq(Fn f, Expr init) {
  return reduce_like("reduceSeq", std::move(f), std::move(init), true);
}
Expr reduceSeq(Fn f, Expr init, Expr x) {
  return reduceSeq(std::move(f), std::move(init))(x);
}

Fn iterate(arith::Expr count, Fn f) {
  ir::iterate(count, ir::id()); // validates the count now
  return Fn::from_maker([count, f = std::move(f)](std::span<const Type> args) {
    return ir::iterate(count, f.instantiate(args));
  });
}
Expr iterate(arith::Expr count, Fn f, Expr x) {
  return iterate(std::move(count), std::move(f))(x);
}

Fn zip() {
  return Fn(ir::zip());
}
Fn split(arith::Expr chunk) {
  return Fn(ir::split(std::move(chunk)));
}
Expr split(arith::Expr chunk, Expr x) {
  return ir::call(ir::split(std::move(chunk)), {x});
}
Fn join() {
  return Fn(ir::join());
}
Expr join(Expr x) {
  return ir::call(ir::join(), {x});
}
Fn slide(arith::Expr size, arith::Expr step) {
  return Fn(ir::slide(size, step));
}
Expr slide(arith::Expr size, arith::Expr step, Expr x) {
  return ir::call(ir::slide(size, step), {x});
}

Border constant(ir::Scalar value) {
  return Border{ir::Boundary{ir::Boundary::Kind::Constant, value}};
}
Fn pad(arith::Expr left, arith::Expr right, Border b) {
  return Fn(ir::pad(left, right, b.value));
}
Expr pad(arith::Expr left, arith::Expr right, Border b, Expr x) {
  return ir::call(ir::pad(left, right, b.value), {x});
}

Fn at(arith::Expr index) {
  return Fn(ir::at(std::move(index)));
}
Expr at(arith::Expr index, Expr x) {
  return ir::call(ir::at(std::move(index)), {x});
}
Expr at(Expr x, arith::Expr index) {
  return ir::call(ir::at(std::move(index)), {x});
}
Fn get(int index) {
  return Fn(ir::get(index));
}
Expr get(int index, Expr x) {
  return ir::call(ir::get(index), {x});
}
Fn transpose() {
  return Fn(ir::transpose());
}
Expr transpose(Expr x) {
  return ir::call(ir::transpose(), {x});
}
Fn id() {
  return Fn(ir::id());
}
Expr id(Expr x) {
  return ir::call(ir::id(), {x});
}

Expr array(arith::Expr length, Fn f) {
  return ir::call(ir::generate(std::move(length), f.instantiate({Type::int_(), Type::int_()})), {});
}

Fn toGlobal(Fn f) {
  return Fn::from_maker([f = std::move(f)](std::span<const Type> args) {
    return ir::to_global(f.instantiate(args));
  });
}
Fn toLocal(Fn f) {
  return Fn::from_maker(
      [f = std::move(f)](std::span<const Type> args) { return ir::to_local(f.instantiate(args)); });
}
Fn toLocalPadded(int padding, Fn f) {
  return Fn::from_maker([padding, f = std::move(f)](std::span<const Type> args) {
    return ir::to_local_padded(arith::Expr(padding), f.instantiate(args));
  });
}
Fn toPrivate(Fn f) {
  return Fn::from_maker([f = std::move(f)](std::span<const Type> args) {
    return ir::to_private(f.instantiate(args));
  });
}

Fn asVector(int width) {
  return Fn(ir::as_vector(width));
}
Expr asVector(int width, Expr x) {
  return ir::call(ir::as_vector(width), {x});
}
Fn asScalar() {
  return Fn(ir::as_scalar());
}
Expr asScalar(Expr x) {
  return ir::call(ir::as_scalar(), {x});
}
Fn vectorize(int width, Fn user_function) {
  ir::as_vector(width); // validates the width now
  return Fn::from_maker([width, f = std::move(user_function)](std::span<const Type> args) {
    // The user function is instantiated at the component types of its vector arguments.
    std::vector<Type> components;
    auto add = [&](const Type& t) {
      const auto* v = t.as<ir::VectorType>();
      components.push_back(v ? Type::scalar(v->kind) : t);
    };
    for (const Type& t : args) {
      if (const auto* tuple = t.as<ir::TupleType>())
        for (const Type& e : tuple->elements)
          add(e);
      else
        add(t);
    }
    return ir::vectorize(width, f.instantiate(components));
  });
}
Fn mapSeqSlide(Fn f, arith::Expr size, arith::Expr step) {
  ir::slide(size, step); // validates now
  return Fn::from_maker([=](std::span<const Type> args) {
    Type window = Type::array(element_of("mapSeqSlide", args), size);
    return ir::map_seq_slide(f.instantiate({window}), size, step);
  });
}
Expr mapSeqSlide(Fn f, arith::Expr size, arith::Expr step, Expr x) {
  return mapSeqSlide(std::move(f), std::move(size), std::move(step))(x);
}

// ---- derived forms
// ---------------------------------------------------------------------------------

Fn map2D(Fn f) {
  return map(map(std::move(f)));
}
Expr map2D(Fn f, Expr x) {
  return map2D(std::move(f))(x);
}
Fn map3D(Fn f) {
  return map(map(map(std::move(f))));
}
Expr map3D(Fn f, Expr x) {
  return map3D(std::move(f))(x);
}

Fn slide2D(arith::Expr size, arith::Expr step) {
  ir::slide(size, step); // validates now
  return Fn([size, step](Expr x) { return ir::slide_2d(size, step, x); });
}
Expr slide2D(arith::Expr size, arith::Expr step, Expr x) {
  return ir::slide_2d(size, step, x);
}
Fn slide3D(arith::Expr size, arith::Expr step) {
  ir::slide(size, step);
  return Fn([size, step](Expr x) { return ir::slide_3d(size, step, x); });
}
Expr slide3D(arith::Expr size, arith::Expr step, Expr x) {
  return ir::slide_3d(size, step, x);
}

Fn pad2D(arith::Expr left, arith::Expr right, Border b) {
  ir::pad(left, right, b.value);
  return Fn([=](Expr x) { return ir::pad_2d(left, right, b.value, x); });
}
Expr pad2D(arith::Expr left, arith::Expr right, Border b, Expr x) {
  return ir::pad_2d(left, right, b.value, x);
}
Fn pad3D(arith::Expr left, arith::Expr right, Border b) {
  ir::pad(left, right, b.value);
  return Fn([=](Expr x) { return ir::pad_3d(left, right, b.value, x); });
}
Expr pad3D(arith::Expr left, arith::Expr right, Border b, Expr x) {
  return ir::pad_3d(left, right, b.value, x);
}

Fn slide2D(arith::Expr size_y, arith::Expr step_y, arith::Expr size_x, arith::Expr step_x) {
  ir::slide(size_y, step_y); // validates now
  ir::slide(size_x, step_x);
  return Fn([=](Expr x) { return ir::slide_2d({size_y, step_y}, {size_x, step_x}, x); });
}
Expr slide2D(arith::Expr size_y, arith::Expr step_y, arith::Expr size_x, arith::Expr step_x,
             Expr x) {
  return ir::slide_2d({size_y, step_y}, {size_x, step_x}, x);
}
Fn slide3D(arith::Expr size_z, arith::Expr step_z, arith::Expr size_y, arith::Expr step_y,
           arith::Expr size_x, arith::Expr step_x) {
  ir::slide(size_z, step_z);
  ir::slide(size_y, step_y);
  ir::slide(size_x, step_x);
  return Fn([=](Expr x) {
    return ir::slide_3d({size_z, step_z}, {size_y, step_y}, {size_x, step_x}, x);
  });
}
Expr slide3D(arith::Expr size_z, arith::Expr step_z, arith::Expr size_y, arith::Expr step_y,
             arith::Expr size_x, arith::Expr step_x, Expr x) {
  return ir::slide_3d({size_z, step_z}, {size_y, step_y}, {size_x, step_x}, x);
}
Fn pad2D(arith::Expr left_y, arith::Expr right_y, arith::Expr left_x, arith::Expr right_x,
         Border b) {
  ir::pad(left_y, right_y, b.value);
  ir::pad(left_x, right_x, b.value);
  return Fn([=](Expr x) { return ir::pad_2d({left_y, right_y}, {left_x, right_x}, b.value, x); });
}
Expr pad2D(arith::Expr left_y, arith::Expr right_y, arith::Expr left_x, arith::Expr right_x,
           Border b, Expr x) {
  return ir::pad_2d({left_y, right_y}, {left_x, right_x}, b.value, x);
}
Fn pad3D(arith::Expr left_z, arith::Expr right_z, arith::Expr left_y, arith::Expr right_y,
         arith::Expr left_x, arith::Expr right_x, Border b) {
  ir::pad(left_z, right_z, b.value);
  ir::pad(left_y, right_y, b.value);
  ir::pad(left_x, right_x, b.value);
  return Fn([=](Expr x) {
    return ir::pad_3d({left_z, right_z}, {left_y, right_y}, {left_x, right_x}, b.value, x);
  });
}
Expr pad3D(arith::Expr left_z, arith::Expr right_z, arith::Expr left_y, arith::Expr right_y,
           arith::Expr left_x, arith::Expr right_x, Border b, Expr x) {
  return ir::pad_3d({left_z, right_z}, {left_y, right_y}, {left_x, right_x}, b.value, x);
}

// ---- programs
// --------------------------------------------------------------------------------------

ir::Module module(std::vector<ir::Program> programs) {
  ir::Module m;
  for (const ir::Program& p : programs)
    ir::collect_userfuns(p.body, m.userfuns);
  m.programs = std::move(programs);
  return m;
}

} // namespace liftx::dsl
