/// Elaboration of the syntax tree into the typed IR (see elaborate.hpp for the strategy): the
/// shared helpers, the module level (user functions, definitions, types) and names. Values are
/// elaborated in elaborate_values.cpp, function-valued syntax in elaborate_functions.cpp.
#include "ir/parse/elaborate_internal.hpp"

namespace liftx::parse {
namespace elaborate_detail {

// ---- primitives (ir/primitives.hpp) -------------------------------------------------------------

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

bool has_optional_unroll(const Primitive& p) {
  return p.kind == node_kind<ir::MapSeqSlide>;
}

/// The parameters (arguments before the data) of `p` applied to `args` arguments, `data` of
/// them data: the per-dimension form when the count is its own.
size_t params_given(const Primitive& p, size_t args, size_t data) {
  if (std::optional<size_t> per_dim = per_dimension_params(p); per_dim && args == *per_dim + data)
    return *per_dim;
  if (has_optional_unroll(p) && args == p.params.size() + 1 + data)
    return p.params.size() + 1;
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

// ---- the elaborator -----------------------------------------------------------------------------

ir::Module Elaborator::run(const ModuleSyntax& module) {
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

// ---- module level -----------------------------------------------------------------------------

void Elaborator::declare_item(const NameLoc& name) {
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
void Elaborator::check_param_names(const std::vector<const NameLoc*>& names) {
  std::set<std::string, std::less<>> seen;
  for (const NameLoc* n : names) {
    if (find_primitive(n->name) || is_builtin_name(n->name))
      throw UserError(
          fmt::format("'{}' names a primitive or built-in function and cannot be a parameter",
                      n->name),
          n->loc);
    if (userfuns_.count(n->name))
      throw UserError(fmt::format("'{}' names a user function and cannot be a parameter", n->name),
                      n->loc);
    if (!seen.insert(n->name).second)
      throw UserError(fmt::format("duplicate parameter '{}'", n->name), n->loc);
  }
}

ir::UserFunPtr Elaborator::userfun(const UserfunSyntax& u) {
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

ir::Program Elaborator::def(const DefSyntax& d) {
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

ir::Type Elaborator::type(const TypeSyntax& t) {
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

const ir::Expr* Elaborator::lookup(std::string_view name) const {
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
    if (it->first == name)
      return &it->second;
  return nullptr;
}

bool Elaborator::is_userfun_name(std::string_view name) const {
  return userfuns_.count(name) || is_builtin_name(name);
}

/// The user function called `name`; `add` and `mult` resolve by the first argument's scalar
/// kind (the first component of a tuple that will be spread).
ir::UserFunPtr Elaborator::resolve_userfun(const std::string& name,
                                           const std::vector<ir::Type>& types,
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

[[noreturn]] void Elaborator::unknown_name(const Syntax& name) const {
  if (item_locs_.count(name.text))
    throw UserError(fmt::format("'{}' is a definition; definitions cannot be used inside "
                                "other definitions",
                                name.text),
                    name.loc);
  throw UserError(fmt::format("unknown identifier '{}'", name.text), name.loc);
}

std::string Elaborator::size_var_list() const {
  if (size_vars_.empty())
    return "none";
  std::string text;
  for (const auto& [name, var] : size_vars_)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}

} // namespace elaborate_detail

ir::Module elaborate(const ModuleSyntax& module) {
  return elaborate_detail::Elaborator().run(module);
}

} // namespace liftx::parse
