/// The elaborator's sizes (arithmetic on size variables), literals, boundaries and values: data
/// expressions and the applications of primitives, user functions and lambdas to them.
#include "ir/parse/elaborate_internal.hpp"

namespace liftx::parse::elaborate_detail {

// ---- sizes ------------------------------------------------------------------------------------

/// An arithmetic size expression. With `declare` (array lengths in parameter types) unknown
/// names become new size variables; elsewhere only the definition's size variables are allowed.
arith::Expr Elaborator::size(const Syntax& s, bool declare) {
  switch (s.kind) {
  case Kind::IntLit:
    return arith::cst(s.int_value);
  case Kind::Name: {
    if (auto it = size_vars_.find(s.text); it != size_vars_.end())
      return it->second;
    if (declare) {
      // A size is a kernel argument under its own name: one OpenCL C reserves would not build.
      if (ir::is_reserved_in_opencl(s.text))
        throw UserError(
            fmt::format("size variable name '{}' is reserved in OpenCL C; rename it", s.text),
            s.loc);
      arith::Expr var = arith::size_var(s.text);
      size_vars_.emplace(s.text, var);
      return var;
    }
    std::string allowed =
        fmt::format("size arguments may use integer constants and the size variables of '{}' "
                    "({})",
                    def_name_, size_var_list());
    if (lookup(s.text))
      throw UserError(fmt::format("'{}' is a value, not a size: {}", s.text, allowed), s.loc);
    if (find_primitive(s.text) || is_userfun_name(s.text))
      throw UserError(fmt::format("expected a size, got the function '{}': {}", s.text, allowed),
                      s.loc);
    throw UserError(fmt::format("unknown size variable '{}': {}", s.text, allowed), s.loc);
  }
  case Kind::Negate: {
    arith::Expr operand = size(*s.operands[0], declare);
    return located(s.loc, [&] { return -operand; });
  }
  case Kind::Binary: {
    // Folded left to right, as written: `a - b + c` is (a - b) + c.
    arith::Expr result = size(*s.operands[0], declare);
    for (size_t i = 0; i < s.ops.size(); ++i) {
      const NameLoc& op = s.ops[i];
      arith::Expr rhs = size(*s.operands[i + 1], declare);
      bool division = op.name == "/" || op.name == "%" || op.name == "/^";
      if (division && rhs.as_constant() == int64_t{0})
        throw UserError(fmt::format("division by zero in size expression ('{}' 0)", op.name),
                        op.loc);
      result = located(op.loc, [&]() -> arith::Expr {
        if (op.name == "+")
          return result + rhs;
        if (op.name == "-")
          return result - rhs;
        if (op.name == "*")
          return result * rhs;
        if (op.name == "/")
          return result / rhs;
        if (op.name == "%")
          return result % rhs;
        if (op.name == "/^")
          return arith::exact_div(result, rhs);
        LIFTX_UNREACHABLE("unknown operator {}", op.name);
      });
    }
    return result;
  }
  case Kind::Select: {
    arith::Expr lhs = size(*s.operands[0], declare);
    arith::Expr rhs = size(*s.operands[1], declare);
    arith::Expr then = size(*s.operands[2], declare);
    arith::Expr otherwise = size(*s.operands[3], declare);
    static const std::map<std::string, arith::CmpOp, std::less<>> ops = {
        {"<", arith::CmpOp::Lt},  {"<=", arith::CmpOp::Le}, {">", arith::CmpOp::Gt},
        {">=", arith::CmpOp::Ge}, {"==", arith::CmpOp::Eq}, {"!=", arith::CmpOp::Ne}};
    return located(s.loc, [&] { return arith::select(ops.at(s.text), lhs, rhs, then, otherwise); });
  }
  case Kind::Apply: {
    Spine spine = spine_of(s);
    bool min_max =
        spine.head->kind == Kind::Name && (spine.head->text == "min" || spine.head->text == "max");
    if (min_max && spine.args.size() == 2) {
      arith::Expr a = size(*spine.args[0], declare);
      arith::Expr b = size(*spine.args[1], declare);
      return located(
          s.loc, [&] { return spine.head->text == "min" ? arith::min(a, b) : arith::max(a, b); });
    }
    if (min_max)
      throw UserError(
          fmt::format("{} expects 2 size arguments, got {}", spine.head->text, spine.args.size()),
          s.loc);
    break;
  }
  default:
    break;
  }
  throw UserError("expected a size (an integer constant, a size variable or arithmetic on them)",
                  s.loc);
}

// ---- literals ---------------------------------------------------------------------------------

/// The scalar of a literal, possibly negated; nullopt if `s` is not one.
std::optional<Scalar> Elaborator::literal(const Syntax& s) const {
  bool negate = false;
  const Syntax* node = &s;
  if (node->kind == Kind::Negate) {
    negate = true;
    node = node->operands[0].get();
  }
  switch (node->kind) {
  case Kind::IntLit: {
    int64_t v = negate ? -node->int_value : node->int_value;
    if (v < INT32_MIN || v > INT32_MAX)
      throw UserError(fmt::format("integer literal {} does not fit in int", v), s.loc);
    return Scalar{static_cast<int32_t>(v)};
  }
  case Kind::FloatLit:
    return Scalar{negate ? -node->float_value : node->float_value};
  case Kind::DoubleLit:
    return Scalar{negate ? -node->real_value : node->real_value};
  case Kind::BoolLit:
    if (negate)
      throw UserError("cannot negate a bool literal", s.loc);
    return Scalar{node->bool_value};
  default:
    return std::nullopt;
  }
}

ir::Boundary Elaborator::boundary(const Syntax& s) const {
  ir::Boundary b;
  if (s.kind == Kind::Name && s.text == "clamp")
    return b;
  if (s.kind == Kind::Name && s.text == "mirror") {
    b.kind = ir::Boundary::Kind::Mirror;
    return b;
  }
  if (s.kind == Kind::Name && s.text == "wrap") {
    b.kind = ir::Boundary::Kind::Wrap;
    return b;
  }
  if (s.kind == Kind::Apply) {
    Spine spine = spine_of(s);
    if (spine.head->kind == Kind::Name && spine.head->text == "constant") {
      if (spine.args.size() != 1)
        throw UserError(fmt::format("constant expects 1 literal, got {}",
                                    plural(spine.args.size(), "argument")),
                        s.loc);
      std::optional<Scalar> value = literal(*spine.args[0]);
      if (!value)
        throw UserError("constant expects a literal (e.g. constant(0.0f))", spine.args[0]->loc);
      b.kind = ir::Boundary::Kind::Constant;
      b.value = *value;
      return b;
    }
  }
  throw UserError("expected a boundary: clamp, mirror, wrap or constant(VALUE)", s.loc);
}

int Elaborator::tuple_index(const Syntax& s) const {
  if (s.kind != Kind::IntLit || s.int_value > INT_MAX)
    throw UserError("get expects a constant tuple index (0, 1, ...)", s.loc);
  return static_cast<int>(s.int_value);
}

// ---- values -----------------------------------------------------------------------------------

ir::Expr Elaborator::value(const Syntax& s) {
  switch (s.kind) {
  case Kind::Name: {
    if (const ir::Expr* e = lookup(s.text))
      return *e;
    if (find_primitive(s.text) || is_userfun_name(s.text))
      throw UserError(fmt::format("'{}' is a function; a value is expected here", s.text), s.loc);
    if (size_vars_.count(s.text))
      throw UserError(fmt::format("'{}' is a size variable; sizes are allowed only in size "
                                  "arguments (split, slide, pad, indices, ...)",
                                  s.text),
                      s.loc);
    unknown_name(s);
  }
  case Kind::IntLit:
  case Kind::FloatLit:
  case Kind::DoubleLit:
  case Kind::BoolLit:
    return ir::literal(*literal(s));
  case Kind::Negate:
    if (std::optional<Scalar> v = literal(s))
      return ir::literal(*v);
    throw UserError("unary '-' applies to literals and sizes only; compute on values in a "
                    "userfun",
                    s.loc);
  case Kind::Apply:
    return apply(spine_of(s));
  case Kind::Index: {
    ir::Expr array = value(*s.operands[0]);
    arith::Expr index = size(*s.operands[1]);
    return located(s.loc, [&] { return ir::call(ir::at(index), {array}, s.loc); });
  }
  case Kind::Lambda:
    throw UserError("expected a value, got a lambda (a function)", s.loc);
  case Kind::Binary:
  case Kind::Select:
    throw UserError(fmt::format("'{}' is allowed only in size arguments (split, slide, pad, "
                                "indices, ...); compute on values in a userfun",
                                s.text),
                    s.loc);
  }
  LIFTX_UNREACHABLE("bad syntax kind");
}

std::vector<ir::Expr> Elaborator::values(std::span<const Syntax* const> syntaxes) {
  std::vector<ir::Expr> result;
  for (const Syntax* s : syntaxes)
    result.push_back(value(*s));
  return result;
}

ir::Expr Elaborator::call(const ir::Fun& fun, std::vector<ir::Expr> args, const SourceLoc& loc) {
  return located(loc, [&] { return ir::call(fun, std::move(args), loc); });
}

[[noreturn]] void Elaborator::arity_error(const Primitive& p, const Spine& spine) const {
  std::string other_form; // the arguments' other accepted form, if any
  if (std::optional<size_t> n = per_dimension_params(p))
    other_form = fmt::format(" (or {} size arguments, a pair per dimension{})",
                             *n - (p.kind == node_kind<ir::Pad> ? 1 : 0),
                             p.kind == node_kind<ir::Pad> ? ", then the boundary" : "");
  if (has_optional_unroll(p))
    other_form = " (and, optionally, an unroll after the step)";
  throw UserError(fmt::format("{} expects {}{}, got {}", p.name, expected_arguments(p), other_form,
                              plural(spine.args.size(), "argument")),
                  spine.loc);
}

/// A fully applied application in value position.
ir::Expr Elaborator::apply(const Spine& spine) {
  const Syntax& head = *spine.head;
  if (head.kind == Kind::Lambda) {
    std::vector<ir::Expr> data = values(spine.args);
    ir::Fun f = lambda(head, types_of(data));
    return call(f, std::move(data), spine.loc);
  }
  if (head.kind != Kind::Name)
    throw UserError("this expression is not a function and cannot be applied", spine.loc);
  const std::string& name = head.text;
  if (lookup(name))
    throw UserError(fmt::format("'{}' is a value, not a function, and cannot be applied", name),
                    spine.loc);
  if (is_userfun_name(name)) {
    std::vector<ir::Expr> data = values(spine.args);
    ir::UserFunPtr def = resolve_userfun(name, types_of(data), spine.loc);
    return call(ir::user_fun(def), std::move(data), spine.loc);
  }
  const Primitive* p = find_primitive(name);
  if (!p)
    unknown_name(head);
  size_t n_params = params_given(*p, spine.args.size(), 1);
  if (is_memory_primitive(*p) && spine.args.size() == n_params)
    return memory_applied(*p, *spine.args[0], spine.loc); // toLocal(f(x))
  if (spine.args.size() < n_params || !data_count_fits(*p, spine.args.size() - n_params))
    arity_error(*p, spine);
  std::span<const Syntax* const> param_args(spine.args.data(), n_params);
  std::vector<ir::Expr> data = values(std::span<const Syntax* const>(spine.args).subspan(n_params));
  if (is_composite(*p))
    return located(spine.loc, [&] { return composite_value(*p, param_args, data, spine.loc); });
  ir::Fun fun = located(spine.loc, [&] { return primitive(*p, param_args, types_of(data)); });
  return call(fun, std::move(data), spine.loc);
}

/// `toLocal(f(x))` = `toLocal(f)(x)`, also nested (`toLocal(toGlobal(f(x)))`).
ir::Expr Elaborator::memory_applied(const Primitive& p, const Syntax& inner, const SourceLoc& loc) {
  FunctionAndData split = split_data(inner);
  if (split.data.empty())
    throw UserError(fmt::format("{} expects a function and its data: {}(f)(x) or {}(f(x))", p.name,
                                p.name, p.name),
                    loc);
  std::vector<ir::Expr> data = values(split.data);
  std::vector<ir::Type> types = types_of(data);
  ir::Fun f = split.make_fun(types);
  ir::Fun wrapped = located(loc, [&] { return memory(p, f); });
  return call(wrapped, std::move(data), loc);
}

FunctionAndData Elaborator::split_data(const Syntax& s) {
  Spine spine = spine_of(s);
  const Syntax* head = spine.head;
  if (head->kind == Kind::Lambda)
    return {[this, head](const std::vector<ir::Type>& types) { return lambda(*head, types); },
            spine.args};
  if (head->kind == Kind::Name) {
    const Primitive* p = find_primitive(head->text);
    if (p && is_memory_primitive(*p) && spine.args.size() == 1) {
      FunctionAndData inner = split_data(*spine.args[0]);
      auto make_inner = inner.make_fun;
      SourceLoc loc = spine.loc;
      return {[this, p, make_inner, loc](const std::vector<ir::Type>& types) {
                ir::Fun f = make_inner(types);
                return located(loc, [&] { return memory(*p, f); });
              },
              std::move(inner.data)};
    }
    size_t n_fun_args = p ? std::min(p->params.size(), spine.args.size()) : 0;
    Spine fun_part{head, {spine.args.begin(), spine.args.begin() + n_fun_args}, spine.loc};
    return {[this, fun_part](const std::vector<ir::Type>& types) {
              return named_function(fun_part, types);
            },
            {spine.args.begin() + n_fun_args, spine.args.end()}};
  }
  return {nullptr, {}};
}

ir::Fun Elaborator::memory(const Primitive& p, const ir::Fun& f) const {
  switch (p.kind) {
  case node_kind<ir::ToGlobal>:
    return ir::to_global(f);
  case node_kind<ir::ToLocal>:
    return ir::to_local(f);
  case node_kind<ir::ToPrivate>:
    return ir::to_private(f);
  default:
    LIFTX_UNREACHABLE("{} is not a memory primitive", p.name);
  }
}

} // namespace liftx::parse::elaborate_detail
