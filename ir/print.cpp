// The .lift printer (grammar in docs / notes): output parses back to an alpha-equal program.
#include "ir/expr.hpp"

#include "ir/fields.hpp"
#include "ir/primitives.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <type_traits>
#include <unordered_map>

namespace liftx::ir {
namespace {

/// Names the printer never gives a parameter: keywords, primitives, boundaries and built-ins.
const std::set<std::string, std::less<>>& reserved_names() {
  static const std::set<std::string, std::less<>> names = [] {
    std::set<std::string, std::less<>> set = {
        "userfun", "def",      "true",       "false",       "bool",     "int", "float",
        "double",  "clamp",    "mirror",     "wrap",        "constant", "add", "mult",
        "add_int", "mult_int", "add_double", "mult_double", "min",      "max"};
    for (const Primitive& p : primitives())
      set.emplace(p.name);
    for (ParallelLevel level :
         {ParallelLevel::Global, ParallelLevel::Workgroup, ParallelLevel::Local})
      set.emplace(map_family(level));
    return set;
  }();
  return names;
}

bool is_ident_char(char c, bool first) {
  bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  return alpha || (!first && c >= '0' && c <= '9');
}

/// A valid identifier derived from a hint ("" -> "x", "2d" -> "x2d", "a-b" -> "a_b").
std::string sanitize(const std::string& hint) {
  std::string out;
  for (char c : hint)
    out += is_ident_char(c, false) ? c : '_';
  if (out.empty() || out == "_")
    return "x";
  if (!is_ident_char(out[0], true))
    out.insert(out.begin(), 'x'); // starts with a digit
  return out;
}

/// Shortest float/double text that reads back to the same value, with '.' or an exponent.
template <class F>
std::string real_text(F value, const char* suffix) {
  LIFTX_USER_CHECK(std::isfinite(value), "cannot print the non-finite literal {}", value);
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  LIFTX_INTERNAL_CHECK(ec == std::errc(), "to_chars failed");
  std::string text(buf, end);
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  else if (text.find('.') == std::string::npos) {
    // "1e+20" is valid C but keep a mantissa dot for readability: "1.0e+20".
    auto e = text.find('e');
    text.insert(e, ".0");
  }
  return text + suffix;
}

std::string scalar_text(const Scalar& s) {
  return std::visit(
      [](auto v) -> std::string {
        using V = decltype(v);
        if constexpr (std::is_same_v<V, bool>)
          return v ? "true" : "false";
        else if constexpr (std::is_same_v<V, int32_t>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<V, float>)
          return real_text(v, "f");
        else
          return real_text(v, "");
      },
      s);
}

std::string arith_text(const arith::Expr& e) {
  return e.to_string();
}

/// `add_int` and `add_double` print as `add` (the parser resolves by argument type); likewise mult.
std::string userfun_text(const UserFunDef& def) {
  for (const char* family : {"add", "mult"}) {
    for (const char* suffix : {"", "_int", "_double"}) {
      std::string name = std::string(family) + suffix;
      if (def.name() != name)
        continue;
      if (auto builtin = UserFunDef::builtin(name); builtin && same_userfun(*builtin, def))
        return family;
    }
  }
  return def.name();
}

class Printer {
public:
  /// Names that parameters must avoid: size variables and user functions of the printed item.
  void reserve(const std::string& name) { taken_.insert(name); }

  void reserve_names_in(const Type& t) {
    for (const arith::Expr& v : size_vars(t))
      reserve(v.node().name);
  }

  std::string name_of(const Expr& p) {
    const auto* param = p.as<Param>();
    LIFTX_INTERNAL_CHECK(param, "name_of a non-parameter");
    if (auto it = names_.find(param->id); it != names_.end())
      return it->second;
    std::string base = sanitize(param->name);
    std::string name = base;
    for (int i = 1; taken_.count(name) || reserved_names().count(name); ++i)
      name = fmt::format("{}_{}", base, i);
    taken_.insert(name);
    names_.emplace(param->id, name);
    return name;
  }

  std::string expr(const Expr& e) {
    if (e.as<Param>())
      return name_of(e);
    if (const auto* l = e.as<Literal>())
      return scalar_text(l->value);
    const auto& c = *e.as<Call>();
    std::vector<std::string> args;
    for (const Expr& a : c.args)
      args.push_back(expr(a));
    const Fun& f = c.fun;
    if (const auto* at = f.as<At>(); at && args.size() == 1)
      return fmt::format("{}[{}]", args[0], arith_text(at->index));
    if (f.as<Lambda>())
      return fmt::format("({})({})", fun(f), join_list(args));
    if (f.as<UserFun>() || f.as<Zip>())
      return fmt::format("{}({})", fun(f), join_list(args));
    // A primitive prints applied: its parameters, then its data arguments.
    std::vector<std::string> all = prim_params(f);
    if (all.empty() && !has_params(f))
      return fmt::format("{}({})", fun_name(f), join_list(args));
    all.insert(all.end(), args.begin(), args.end());
    return fmt::format("{}({})", fun_name(f), join_list(all));
  }

  std::string fun(const Fun& f) {
    if (const auto* l = f.as<Lambda>()) {
      std::vector<std::string> names;
      for (const Expr& p : l->params)
        names.push_back(name_of(p));
      std::string body = expr(l->body);
      if (names.size() == 1)
        return fmt::format("{} => {}", names[0], body);
      return fmt::format("({}) => {}", join_list(names), body);
    }
    if (const auto* u = f.as<UserFun>())
      return userfun_text(*u->def);
    if (!has_params(f))
      return fun_name(f); // join, transpose, zip, id
    return fmt::format("{}({})", fun_name(f), join_list(prim_params(f)));
  }

  std::string type(const Type& t) { return t.to_string(); }

private:
  static std::string join_list(const std::vector<std::string>& items) {
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0)
        out += ", ";
      out += items[i];
    }
    return out;
  }

  static bool has_params(const Fun& f) { return !primitive_of(f)->params.empty(); }

  /// The parameters of a primitive (everything but its data arguments), printed: its fields in
  /// order.
  std::vector<std::string> prim_params(const Fun& f) {
    std::vector<std::string> out;
    std::visit(
        [&](const auto& n) {
          if constexpr (requires { n.dim; }) // part of the name: mapGlb0
            out.push_back(fun(n.f));
          else
            for_each_field(n, [&](const auto& x) { out.push_back(text(x)); });
          // An optional trailing parameter at its default is left out: mapSeqSlide(f, 3, 1).
          if constexpr (std::is_same_v<std::decay_t<decltype(n)>, MapSeqSlide>)
            if (n.unroll == 1)
              out.pop_back();
        },
        f.data().node);
    return out;
  }

  // Fields of ir/fields.hpp, by type (lambdas and user functions are printed before).
  std::string text(const Fun& f) { return fun(f); }
  std::string text(const Expr& e) { return expr(e); }
  std::string text(const arith::Expr& e) { return arith_text(e); }
  std::string text(int v) { return std::to_string(v); }
  std::string text(const Boundary& b) { return boundary_text(b); }
  std::string text(const std::vector<Expr>&) { LIFTX_UNREACHABLE("a lambda is not a primitive"); }
  std::string text(const UserFunPtr&) { LIFTX_UNREACHABLE("a user function is not a primitive"); }

  std::set<std::string, std::less<>> taken_;
  std::unordered_map<uint64_t, std::string> names_;
};

/// Reserves the names of user functions called anywhere below `e` / `f`.
void reserve_userfun_names(Printer& printer, const Fun& f);
void reserve_userfun_names(Printer& printer, const Expr& e) {
  for_each_child(
      e, [&](const Fun& g) { reserve_userfun_names(printer, g); },
      [&](const Expr& x) { reserve_userfun_names(printer, x); });
}
void reserve_userfun_names(Printer& printer, const Fun& f) {
  if (const auto* u = f.as<UserFun>())
    printer.reserve(u->def->name());
  for_each_child(
      f, [&](const Fun& g) { reserve_userfun_names(printer, g); },
      [&](const Expr& x) { reserve_userfun_names(printer, x); });
}

std::string print_program(Printer& printer, const Program& p) {
  for (const Expr& param : p.params)
    printer.reserve_names_in(param.type());
  reserve_userfun_names(printer, p.body);
  std::vector<std::string> params;
  for (const Expr& param : p.params)
    params.push_back(fmt::format("{}: {}", printer.name_of(param), param.type().to_string()));
  std::string list;
  for (size_t i = 0; i < params.size(); ++i)
    list += (i > 0 ? ", " : "") + params[i];
  std::string layouts;
  for (const StorageGroup& g : p.storage) {
    std::string fields = g.layout == StorageGroup::Layout::AoSoA ? std::to_string(g.block) : "";
    for (size_t f : g.fields)
      fields += (fields.empty() ? "" : ", ") + printer.name_of(p.params[f]);
    layouts += fmt::format("{}{}({})", layouts.empty() ? " layout " : ", ",
                           g.layout == StorageGroup::Layout::AoS ? "aos" : "aosoa", fields);
  }
  return fmt::format("def {}({}){} = {}", p.name, list, layouts, printer.expr(p.body));
}

} // namespace

std::string boundary_text(const Boundary& b) {
  switch (b.kind) {
  case Boundary::Kind::Clamp:
    return "clamp";
  case Boundary::Kind::Mirror:
    return "mirror";
  case Boundary::Kind::Wrap:
    return "wrap";
  case Boundary::Kind::Constant:
    return "constant(" + scalar_text(b.value) + ")";
  }
  LIFTX_UNREACHABLE("bad boundary kind");
}

std::string print(const Expr& e) {
  Printer printer;
  reserve_userfun_names(printer, e);
  return printer.expr(e);
}

std::string print(const Fun& f) {
  Printer printer;
  reserve_userfun_names(printer, f);
  return printer.fun(f);
}

std::string print(const Program& p) {
  Printer printer;
  return print_program(printer, p);
}

std::string print(const Module& m) {
  std::vector<std::string> items;
  // The module's user functions, then those its programs call that it does not list (rewrites
  // may add their own, e.g. temporal blocking's tile edges), so that the text parses back.
  std::vector<UserFunPtr> userfuns = m.userfuns;
  for (const Program& p : m.programs) {
    std::vector<UserFunPtr> used;
    collect_userfuns(p.body, used);
    for (const UserFunPtr& u : used)
      if (std::none_of(userfuns.begin(), userfuns.end(),
                       [&](const UserFunPtr& listed) { return listed->name() == u->name(); }))
        userfuns.push_back(u);
  }
  for (const UserFunPtr& u : userfuns) {
    std::string params;
    for (size_t i = 0; i < u->params().size(); ++i)
      params += fmt::format("{}{}: {}", i > 0 ? ", " : "", u->params()[i].name,
                            scalar_name(u->params()[i].kind));
    items.push_back(fmt::format("userfun {}({}): {} {{{}}}\n", u->name(), params,
                                result_type_text(*u), u->body_text()));
  }
  for (const Program& p : m.programs) {
    Printer printer;
    for (const UserFunPtr& u : userfuns)
      printer.reserve(u->name());
    items.push_back(print_program(printer, p) + "\n");
  }
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i > 0 ? "\n" : "") + items[i];
  return out;
}

} // namespace liftx::ir
