/// Elaboration of the syntax tree into the typed IR (see elaborate.hpp for the strategy).
#include "ir/parse/elaborate.hpp"

#include "ir/storage.hpp"

#include "ir/derived.hpp"
#include "ir/primitives.hpp"
#include "support/error.hpp"

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <set>

namespace liftx::parse {
namespace {

using Kind = Syntax::Kind;
using ir::Scalar;

// ---- primitives (ir/primitives.hpp) -------------------------------------------------------------

using ir::find_primitive;
using ir::kAtLeastOne;
using ir::kAtLeastTwo;
using ir::node_kind;
using ir::Primitive;

bool is_memory_primitive(const Primitive& p) {
  return p.kind == node_kind<ir::ToGlobal> || p.kind == node_kind<ir::ToLocal> ||
         p.kind == node_kind<ir::ToPrivate>;
}

/// Derived forms that are a composition, not one ir::Fun (all but map2D and map3D): built as
/// values, eta-expanded where a function is expected.
bool is_composite(const Primitive& p) {
  return p.derived() && p.kind != node_kind<ir::Map>;
}

std::string plural(size_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

/// "1 size argument and 1 array", "1 function, 1 initial value and 1 array".
std::string expected_arguments(const Primitive& p) {
  std::vector<std::string> parts;
  auto count = [&](char letter, std::string_view noun) {
    size_t n = std::count(p.params.begin(), p.params.end(), letter);
    if (n > 0)
      parts.push_back(plural(n, noun));
  };
  count('f', "function");
  count('s', "size argument");
  count('i', "index");
  count('v', "initial value");
  count('b', "boundary");
  count('n', "tuple index");
  if (p.data == kAtLeastTwo)
    parts.push_back(fmt::format("at least 2 {}s", p.data_noun));
  else if (p.data == kAtLeastOne)
    parts.push_back(fmt::format("at least 1 {}", p.data_noun));
  else if (p.data > 0)
    parts.push_back(plural(static_cast<size_t>(p.data), p.data_noun));
  if (parts.empty())
    return "no arguments";
  std::string text = parts[0];
  for (size_t i = 1; i < parts.size(); ++i)
    text += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return text;
}

/// slide2D/3D and pad2D/3D take one (size, step) or (left, right) pair for all dimensions, or one
/// per dimension (outermost first): their parameter count in the per-dimension form.
std::optional<size_t> per_dimension_params(const Primitive& p) {
  if (!is_composite(p) || (p.kind != node_kind<ir::Slide> && p.kind != node_kind<ir::Pad>))
    return std::nullopt;
  return p.params.size() + 2 * static_cast<size_t>(p.rank - 1);
}

/// The parameters (arguments before the data) of `p` applied to `args` arguments, `data` of
/// them data: the per-dimension form when the count is its own.
size_t params_given(const Primitive& p, size_t args, size_t data) {
  if (std::optional<size_t> per_dim = per_dimension_params(p); per_dim && args == *per_dim + data)
    return *per_dim;
  return p.params.size();
}

bool data_count_fits(const Primitive& p, size_t count) {
  if (p.data == kAtLeastTwo)
    return count >= 2;
  if (p.data == kAtLeastOne)
    return count >= 1;
  return count == static_cast<size_t>(p.data);
}

constexpr std::string_view kBuiltinNames[] = {"add",      "mult",       "add_int",
                                              "mult_int", "add_double", "mult_double"};

bool is_builtin_name(std::string_view name) {
  for (std::string_view b : kBuiltinNames)
    if (b == name)
      return true;
  return false;
}

/// Runs `build`, attaching `loc` to a UserError that has no location yet.
template <class F>
auto located(const SourceLoc& loc, F&& build) -> decltype(build()) {
  try {
    return build();
  } catch (const UserError& e) {
    throw e.located(loc);
  }
}

std::string describe_types(const std::vector<ir::Type>& types) {
  if (types.empty())
    return "no arguments";
  std::string text =
      fmt::format("{} of type{} ", plural(types.size(), "argument"), types.size() == 1 ? "" : "s");
  for (size_t i = 0; i < types.size(); ++i)
    text += (i ? ", " : "") + types[i].to_string();
  return text;
}

std::vector<ir::Type> types_of(const std::vector<ir::Expr>& exprs) {
  std::vector<ir::Type> types;
  types.reserve(exprs.size());
  for (const ir::Expr& e : exprs)
    types.push_back(e.type());
  return types;
}

/// An application `head(a, b)(c)` seen as the head and all its arguments `a, b, c`.
struct Spine {
  const Syntax* head;
  std::vector<const Syntax*> args;
  SourceLoc loc; ///< the head's location: where applications are reported
};

Spine spine_of(const Syntax& s) {
  std::vector<const Syntax*> groups; // innermost application last
  const Syntax* node = &s;
  while (node->kind == Kind::Apply) {
    groups.push_back(node);
    node = node->operands[0].get();
  }
  Spine spine{node, {}, node->loc};
  for (auto it = groups.rbegin(); it != groups.rend(); ++it)
    for (size_t i = 1; i < (*it)->operands.size(); ++i)
      spine.args.push_back((*it)->operands[i].get());
  return spine;
}

/// A `toLocal(f(x))` argument split into the function part (built once the data types are known)
/// and the data arguments.
struct FunctionAndData {
  std::function<ir::Fun(const std::vector<ir::Type>&)> make_fun;
  std::vector<const Syntax*> data;
};

// ---- the elaborator -----------------------------------------------------------------------------

class Elaborator {
public:
  ir::Module run(const ModuleSyntax& module) {
    for (const auto& item : module.items) {
      if (const auto* u = std::get_if<UserfunSyntax>(&item))
        declare_item(u->name);
      else
        declare_item(std::get<DefSyntax>(item).name);
    }
    ir::Module result;
    for (const auto& item : module.items)
      if (const auto* u = std::get_if<UserfunSyntax>(&item))
        result.userfuns.push_back(userfun(*u));
    for (const auto& item : module.items)
      if (const auto* d = std::get_if<DefSyntax>(&item))
        result.programs.push_back(def(*d));
    return result;
  }

private:
  // ---- module level -----------------------------------------------------------------------------

  void declare_item(const NameLoc& name) {
    if (find_primitive(name.name))
      throw UserError(fmt::format("'{}' is a primitive and cannot be redefined", name.name),
                      name.loc);
    if (is_builtin_name(name.name))
      throw UserError(fmt::format("'{}' is a built-in function and cannot be redefined", name.name),
                      name.loc);
    auto [it, inserted] = item_locs_.emplace(name.name, name.loc);
    if (!inserted)
      throw UserError(fmt::format("redefinition of '{}' (first defined at {})", name.name,
                                  it->second.to_string()),
                      name.loc);
  }

  /// Parameter names may not hide a primitive, built-in or user function, and must be distinct.
  void check_param_names(const std::vector<const NameLoc*>& names) {
    std::set<std::string, std::less<>> seen;
    for (const NameLoc* n : names) {
      if (find_primitive(n->name) || is_builtin_name(n->name))
        throw UserError(
            fmt::format("'{}' names a primitive or built-in function and cannot be a parameter",
                        n->name),
            n->loc);
      if (userfuns_.count(n->name))
        throw UserError(
            fmt::format("'{}' names a user function and cannot be a parameter", n->name), n->loc);
      if (!seen.insert(n->name).second)
        throw UserError(fmt::format("duplicate parameter '{}'", n->name), n->loc);
    }
  }

  ir::UserFunPtr userfun(const UserfunSyntax& u) {
    std::vector<NameLoc> names;
    for (const auto& p : u.params)
      names.push_back(NameLoc{p.name, p.loc});
    std::set<std::string, std::less<>> seen;
    for (const NameLoc& n : names)
      if (!seen.insert(n.name).second)
        throw UserError(fmt::format("duplicate parameter '{}'", n.name), n.loc);
    std::vector<ir::UserFunParam> params;
    for (const auto& p : u.params)
      params.push_back(ir::UserFunParam{p.name, p.kind});
    ir::UserFunPtr def = located(u.body_loc, [&] {
      return ir::UserFunDef::parse(u.name.name, std::move(params), u.result, u.body, u.body_loc);
    });
    userfuns_.emplace(u.name.name, def);
    return def;
  }

  ir::Program def(const DefSyntax& d) {
    def_name_ = d.name.name;
    size_vars_.clear();
    scope_.clear();
    std::vector<const NameLoc*> names;
    for (const auto& p : d.params)
      names.push_back(&p.name);
    check_param_names(names);
    std::vector<ir::Expr> params;
    for (const auto& p : d.params) {
      ir::Expr param = ir::param(type(p.type), p.name.name);
      params.push_back(param);
      scope_.emplace_back(p.name.name, param);
    }
    ir::Expr body = value(*d.body);
    ir::Program program{d.name.name, std::move(params), std::move(body), d.loc};
    for (const LayoutSyntax& l : d.layouts) {
      ir::StorageGroup group;
      if (l.layout.name == "aosoa") {
        group.layout = ir::StorageGroup::Layout::AoSoA;
        group.block = l.block;
      }
      for (const NameLoc& field : l.fields) {
        auto it = std::find_if(d.params.begin(), d.params.end(),
                               [&](const DefParamSyntax& p) { return p.name.name == field.name; });
        if (it == d.params.end())
          throw UserError(
              fmt::format("layout: '{}' is not a parameter of '{}'", field.name, d.name.name),
              field.loc);
        group.fields.push_back(static_cast<size_t>(it - d.params.begin()));
      }
      program.storage.push_back(std::move(group));
      ir::check_storage(program, l.layout.loc);
    }
    return program;
  }

  ir::Type type(const TypeSyntax& t) {
    switch (t.kind) {
    case TypeSyntax::Kind::Scalar:
      return ir::Type::scalar(t.scalar);
    case TypeSyntax::Kind::Tuple: {
      std::vector<ir::Type> elements;
      for (const TypeSyntax& e : t.elements)
        elements.push_back(type(e));
      return located(t.loc, [&] { return ir::Type::tuple(std::move(elements)); });
    }
    case TypeSyntax::Kind::Array: {
      ir::Type element = type(t.elements[0]);
      arith::Expr length = size(*t.length, /*declare=*/true);
      if (arith::prove_lt(length, arith::Expr(0)))
        throw UserError(fmt::format("array length {} is negative", length.to_string()),
                        t.length->loc);
      return located(t.length->loc, [&] { return ir::Type::array(element, length); });
    }
    }
    LIFTX_UNREACHABLE("bad type syntax");
  }

  // ---- names ------------------------------------------------------------------------------------

  const ir::Expr* lookup(std::string_view name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (it->first == name)
        return &it->second;
    return nullptr;
  }

  bool is_userfun_name(std::string_view name) const {
    return userfuns_.count(name) || is_builtin_name(name);
  }

  /// The user function called `name`; `add` and `mult` resolve by the first argument's scalar
  /// kind (the first component of a tuple that will be spread).
  ir::UserFunPtr resolve_userfun(const std::string& name, const std::vector<ir::Type>& types,
                                 const SourceLoc& loc) const {
    if (auto it = userfuns_.find(name); it != userfuns_.end())
      return it->second;
    std::string builtin = name;
    if ((name == "add" || name == "mult") && !types.empty()) {
      ir::Type first = types[0];
      if (const auto* tuple = first.as<ir::TupleType>())
        first = tuple->elements[0];
      if (const auto* scalar = first.as<ir::ScalarType>()) {
        if (scalar->kind == ir::ScalarKind::Int)
          builtin += "_int";
        if (scalar->kind == ir::ScalarKind::Double)
          builtin += "_double";
      }
    }
    ir::UserFunPtr def = ir::UserFunDef::builtin(builtin);
    if (!def)
      throw UserError(fmt::format("built-in function '{}' is not available", builtin), loc);
    return def;
  }

  [[noreturn]] void unknown_name(const Syntax& name) const {
    if (item_locs_.count(name.text))
      throw UserError(fmt::format("'{}' is a definition; definitions cannot be used inside "
                                  "other definitions",
                                  name.text),
                      name.loc);
    throw UserError(fmt::format("unknown identifier '{}'", name.text), name.loc);
  }

  std::string size_var_list() const {
    if (size_vars_.empty())
      return "none";
    std::string text;
    for (const auto& [name, var] : size_vars_)
      text += (text.empty() ? "" : ", ") + name;
    return text;
  }

  // ---- sizes ------------------------------------------------------------------------------------

  /// An arithmetic size expression. With `declare` (array lengths in parameter types) unknown
  /// names become new size variables; elsewhere only the definition's size variables are allowed.
  arith::Expr size(const Syntax& s, bool declare = false) {
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
      return located(s.loc,
                     [&] { return arith::select(ops.at(s.text), lhs, rhs, then, otherwise); });
    }
    case Kind::Apply: {
      Spine spine = spine_of(s);
      bool min_max = spine.head->kind == Kind::Name &&
                     (spine.head->text == "min" || spine.head->text == "max");
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
  std::optional<Scalar> literal(const Syntax& s) const {
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

  ir::Boundary boundary(const Syntax& s) const {
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

  int tuple_index(const Syntax& s) const {
    if (s.kind != Kind::IntLit || s.int_value > INT_MAX)
      throw UserError("get expects a constant tuple index (0, 1, ...)", s.loc);
    return static_cast<int>(s.int_value);
  }

  // ---- values -----------------------------------------------------------------------------------

  ir::Expr value(const Syntax& s) {
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

  std::vector<ir::Expr> values(std::span<const Syntax* const> syntaxes) {
    std::vector<ir::Expr> result;
    for (const Syntax* s : syntaxes)
      result.push_back(value(*s));
    return result;
  }

  ir::Expr call(const ir::Fun& fun, std::vector<ir::Expr> args, const SourceLoc& loc) {
    return located(loc, [&] { return ir::call(fun, std::move(args), loc); });
  }

  [[noreturn]] void arity_error(const Primitive& p, const Spine& spine) const {
    std::string per_dimension;
    if (std::optional<size_t> n = per_dimension_params(p))
      per_dimension = fmt::format(" (or {} size arguments, a pair per dimension{})",
                                  *n - (p.kind == node_kind<ir::Pad> ? 1 : 0),
                                  p.kind == node_kind<ir::Pad> ? ", then the boundary" : "");
    throw UserError(fmt::format("{} expects {}{}, got {}", p.name, expected_arguments(p),
                                per_dimension, plural(spine.args.size(), "argument")),
                    spine.loc);
  }

  /// A fully applied application in value position.
  ir::Expr apply(const Spine& spine) {
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
    std::vector<ir::Expr> data =
        values(std::span<const Syntax* const>(spine.args).subspan(n_params));
    if (is_composite(*p))
      return located(spine.loc, [&] { return composite_value(*p, param_args, data, spine.loc); });
    ir::Fun fun = located(spine.loc, [&] { return primitive(*p, param_args, types_of(data)); });
    return call(fun, std::move(data), spine.loc);
  }

  /// `toLocal(f(x))` = `toLocal(f)(x)`, also nested (`toLocal(toGlobal(f(x)))`).
  ir::Expr memory_applied(const Primitive& p, const Syntax& inner, const SourceLoc& loc) {
    FunctionAndData split = split_data(inner);
    if (split.data.empty())
      throw UserError(fmt::format("{} expects a function and its data: {}(f)(x) or {}(f(x))",
                                  p.name, p.name, p.name),
                      loc);
    std::vector<ir::Expr> data = values(split.data);
    std::vector<ir::Type> types = types_of(data);
    ir::Fun f = split.make_fun(types);
    ir::Fun wrapped = located(loc, [&] { return memory(p, f); });
    return call(wrapped, std::move(data), loc);
  }

  FunctionAndData split_data(const Syntax& s) {
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

  ir::Fun memory(const Primitive& p, const ir::Fun& f) const {
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

  // ---- functions --------------------------------------------------------------------------------

  /// Elaborates function-valued syntax that will be applied to arguments of `types`.
  ir::Fun function(const Syntax& s, const std::vector<ir::Type>& types) {
    if (s.kind == Kind::Lambda)
      return lambda(s, types);
    if (s.kind == Kind::Name || s.kind == Kind::Apply) {
      Spine spine = spine_of(s);
      if (spine.head->kind == Kind::Name)
        return named_function(spine, types);
    }
    throw UserError("expected a function here, got a value", s.loc);
  }

  ir::Fun lambda(const Syntax& s, const std::vector<ir::Type>& types) {
    size_t k = s.params.size();
    std::vector<ir::Type> param_types;
    const auto* tuple = types.size() == 1 ? types[0].as<ir::TupleType>() : nullptr;
    if (types.size() == k) {
      param_types = types;
    } else if (k >= 2 && tuple && tuple->elements.size() == k) {
      param_types = tuple->elements; // one tuple of k components is spread over k parameters
    } else {
      throw UserError(fmt::format("this lambda takes {} but receives {}", plural(k, "parameter"),
                                  describe_types(types)),
                      s.loc);
    }
    std::vector<const NameLoc*> names;
    for (const NameLoc& n : s.params)
      names.push_back(&n);
    check_param_names(names);
    std::vector<ir::Expr> params;
    size_t scope_size = scope_.size();
    for (size_t i = 0; i < k; ++i) {
      params.push_back(ir::param(param_types[i], s.params[i].name));
      scope_.emplace_back(s.params[i].name, params.back());
    }
    ir::Expr body = value(*s.operands[0]);
    scope_.erase(scope_.begin() + static_cast<std::ptrdiff_t>(scope_size), scope_.end());
    return located(s.loc, [&] { return ir::lambda(std::move(params), body); });
  }

  /// A name, possibly applied to the parameters of a primitive (`split(4)`, `reduce(add, 0.0f)`),
  /// used as a function.
  ir::Fun named_function(const Spine& spine, const std::vector<ir::Type>& types) {
    const std::string& name = spine.head->text;
    if (lookup(name))
      throw UserError(fmt::format("'{}' is a value, not a function", name), spine.loc);
    if (is_userfun_name(name)) {
      if (!spine.args.empty())
        throw UserError(fmt::format("user function '{}' cannot be partially applied; pass it by "
                                    "name or apply it to all its arguments",
                                    name),
                        spine.loc);
      return ir::user_fun(resolve_userfun(name, types, spine.loc));
    }
    const Primitive* p = find_primitive(name);
    if (!p)
      unknown_name(*spine.head);
    size_t n_params = params_given(*p, spine.args.size(), 0);
    if (spine.args.size() != n_params) {
      if (spine.args.size() > n_params && data_count_fits(*p, spine.args.size() - n_params))
        throw UserError(fmt::format("expected a function here, but {} is applied to its data; "
                                    "leave the data argument out",
                                    name),
                        spine.loc);
      arity_error(*p, spine);
    }
    return located(spine.loc, [&]() -> ir::Fun {
      if (!is_composite(*p))
        return primitive(*p, spine.args, types);
      // Eta-expand a composite derived form: x => slide2D(3, 1, x).
      std::vector<ir::Type> param_types = types;
      const auto* tuple = types.size() == 1 ? types[0].as<ir::TupleType>() : nullptr;
      if (p->data == kAtLeastTwo && tuple)
        param_types = tuple->elements;
      std::vector<ir::Expr> params;
      for (const ir::Type& t : param_types)
        params.push_back(ir::param(t, "x"));
      ir::Expr body = composite_value(*p, spine.args, params, spine.loc);
      return ir::lambda(std::move(params), body);
    });
  }

  /// A vector width argument: a constant.
  int vector_width(const Primitive& p, const Syntax& s) {
    std::optional<int64_t> width = size(s).as_constant();
    if (!width)
      throw UserError(
          fmt::format("{}: the vector width must be a constant (2, 4, 8 or 16)", p.name), s.loc);
    return static_cast<int>(*width);
  }
  static ir::Type component_type(const ir::Type& t) {
    if (const auto* v = t.as<ir::VectorType>())
      return ir::Type::scalar(v->kind);
    return t; // not a vector: vectorize's type check reports it
  }

  /// The element type `levels` array levels below the single argument type.
  ir::Type element_type(const Primitive& p, const std::vector<ir::Type>& types, int levels) {
    LIFTX_USER_CHECK(types.size() == 1, "{} expects 1 {}, got {}", p.name, p.data_noun,
                     describe_types(types));
    ir::Type t = types[0];
    for (int i = 0; i < levels; ++i) {
      const auto* array = t.as<ir::ArrayType>();
      LIFTX_USER_CHECK(array, "{} expects {}, got {}", p.name,
                       levels == 1   ? "an array"
                       : levels == 2 ? "a 2-dimensional array"
                                     : "a 3-dimensional array",
                       types[0].to_string());
      t = array->element;
    }
    return t;
  }

  /// A non-composite primitive given its parameter arguments, to be applied to `types`.
  ir::Fun primitive(const Primitive& p, std::span<const Syntax* const> args,
                    const std::vector<ir::Type>& types) {
    LIFTX_INTERNAL_CHECK(!is_composite(p), "{} is composite", p.name);
    switch (p.kind) {
    case node_kind<ir::Map>: {
      ir::Fun f = function(*args[0], {element_type(p, types, p.rank)});
      return p.rank == 1 ? ir::map(f) : p.rank == 2 ? ir::map_2d(f) : ir::map_3d(f);
    }
    case node_kind<ir::MapSeq>:
      return ir::map_seq(function(*args[0], {element_type(p, types, 1)}));
    case node_kind<ir::MapGlb>:
      return ir::map_glb(p.dim, function(*args[0], {element_type(p, types, 1)}));
    case node_kind<ir::MapWrg>:
      return ir::map_wrg(p.dim, function(*args[0], {element_type(p, types, 1)}));
    case node_kind<ir::MapLcl>:
      return ir::map_lcl(p.dim, function(*args[0], {element_type(p, types, 1)}));
    case node_kind<ir::Reduce>:
    case node_kind<ir::ReduceSeq>: {
      ir::Expr init = value(*args[1]);
      ir::Fun f = function(*args[0], {init.type(), element_type(p, types, 1)});
      return p.kind == node_kind<ir::Reduce> ? ir::reduce(f, init) : ir::reduce_seq(f, init);
    }
    case node_kind<ir::Iterate>: {
      arith::Expr count = size(*args[0]);
      LIFTX_USER_CHECK(types.size() == 1, "iterate expects 1 argument, got {}",
                       describe_types(types));
      return ir::iterate(count, function(*args[1], types));
    }
    case node_kind<ir::Zip>:
      return ir::zip();
    case node_kind<ir::Tuple>:
      return ir::tuple();
    case node_kind<ir::Split>:
      return ir::split(size(*args[0]));
    case node_kind<ir::Join>:
      return ir::join();
    case node_kind<ir::Slide>: {
      arith::Expr window = size(*args[0]);
      return ir::slide(window, size(*args[1]));
    }
    case node_kind<ir::Pad>: {
      arith::Expr left = size(*args[0]);
      arith::Expr right = size(*args[1]);
      return ir::pad(left, right, boundary(*args[2]));
    }
    case node_kind<ir::At>:
      return ir::at(size(*args[0]));
    case node_kind<ir::Get>:
      return ir::get(tuple_index(*args[0]));
    case node_kind<ir::Transpose>:
      return ir::transpose();
    case node_kind<ir::Id>:
      return ir::id();
    case node_kind<ir::Generate>: {
      arith::Expr length = size(*args[0]);
      return ir::generate(length, function(*args[1], {ir::Type::int_(), ir::Type::int_()}));
    }
    case node_kind<ir::ToGlobal>:
    case node_kind<ir::ToLocal>:
    case node_kind<ir::ToPrivate>:
      return memory(p, function(*args[0], types));
    case node_kind<ir::ToLocalPadded>:
      return ir::to_local_padded(size(*args[0]), function(*args[1], types));
    case node_kind<ir::AsVector>:
      return ir::as_vector(vector_width(p, *args[0]));
    case node_kind<ir::AsScalar>:
      return ir::as_scalar();
    case node_kind<ir::Vectorize>: {
      int width = vector_width(p, *args[0]);
      // The user function is resolved at the component types of its vector arguments.
      std::vector<ir::Type> components;
      for (const ir::Type& t : types) {
        if (const auto* tuple = t.as<ir::TupleType>()) {
          for (const ir::Type& e : tuple->elements)
            components.push_back(component_type(e));
        } else {
          components.push_back(component_type(t));
        }
      }
      return ir::vectorize(width, function(*args[1], components));
    }
    case node_kind<ir::MapSeqSlide>: {
      arith::Expr window = size(*args[1]);
      arith::Expr step = size(*args[2]);
      ir::Type window_type = ir::Type::array(element_type(p, types, 1), window);
      return ir::map_seq_slide(function(*args[0], {window_type}), window, step);
    }
    default:
      LIFTX_UNREACHABLE("the parser does not build {}", p.name);
    }
  }

  /// A composite derived form applied to its data. Type errors of the composition are reported
  /// as the derived form's (`slide2D: map: expected an array, got float`).
  ir::Expr composite_value(const Primitive& p, std::span<const Syntax* const> args,
                           const std::vector<ir::Expr>& data, const SourceLoc& loc) {
    // One pair for every dimension, or one pair each (outermost first); pad's boundary last.
    const bool per_dimension = args.size() == per_dimension_params(p);
    const size_t pairs = p.params.size() >= 2 ? (per_dimension ? size_t(p.rank) : 1) : 0;
    std::vector<ir::DimPair> dims;
    for (size_t k = 0; k < pairs; ++k)
      dims.push_back({size(*args[2 * k]), size(*args[2 * k + 1])});
    while (pairs > 0 && dims.size() < size_t(p.rank))
      dims.push_back(dims.front());
    ir::Boundary b = p.kind == node_kind<ir::Pad> ? boundary(*args[2 * pairs]) : ir::Boundary{};
    try {
      switch (p.kind) {
      case node_kind<ir::Slide>:
        return p.rank == 2 ? ir::slide_2d(dims[0], dims[1], data.at(0), loc)
                           : ir::slide_3d(dims[0], dims[1], dims[2], data.at(0), loc);
      case node_kind<ir::Pad>:
        return p.rank == 2 ? ir::pad_2d(dims[0], dims[1], b, data.at(0), loc)
                           : ir::pad_3d(dims[0], dims[1], dims[2], b, data.at(0), loc);
      case node_kind<ir::Zip>:
        return p.rank == 2 ? ir::zip_2d(data, loc) : ir::zip_3d(data, loc);
      default:
        break;
      }
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}: {}", p.name, e.message()), loc);
    }
    LIFTX_UNREACHABLE("{} is not composite", p.name);
  }

  // ---- state ------------------------------------------------------------------------------------

  std::map<std::string, SourceLoc, std::less<>> item_locs_; ///< userfuns and defs
  std::map<std::string, ir::UserFunPtr, std::less<>> userfuns_;
  // per definition
  std::string def_name_;
  std::map<std::string, arith::Expr, std::less<>> size_vars_;
  std::vector<std::pair<std::string, ir::Expr>> scope_; ///< innermost last
};

} // namespace

ir::Module elaborate(const ModuleSyntax& module) {
  return Elaborator().run(module);
}

} // namespace liftx::parse
