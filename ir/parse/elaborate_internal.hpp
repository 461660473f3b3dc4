#pragma once
/// The elaborator's shared pieces: the helpers on primitives, names and types, and the
/// Elaborator class, whose members elaborate.cpp (module level, names), elaborate_values.cpp
/// (sizes, literals, values) and elaborate_functions.cpp (function-valued syntax) define.
/// Internal to ir/parse: nothing outside the folder includes it.
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

namespace liftx::parse::elaborate_detail {

using Kind = Syntax::Kind;
using ir::Scalar;

// ---- primitives (ir/primitives.hpp) -------------------------------------------------------------

using ir::find_primitive;
using ir::kAtLeastOne;
using ir::kAtLeastTwo;
using ir::node_kind;
using ir::Primitive;

bool is_memory_primitive(const Primitive& p);
bool is_composite(const Primitive& p);
std::string plural(size_t n, std::string_view word);
std::string expected_arguments(const Primitive& p);
std::optional<size_t> per_dimension_params(const Primitive& p);
/// mapSeqSlide takes an optional last parameter, its loop's unroll (ir::MapSeqSlide::unroll).
bool has_optional_unroll(const Primitive& p);
size_t params_given(const Primitive& p, size_t args, size_t data);
bool data_count_fits(const Primitive& p, size_t count);
bool is_builtin_name(std::string_view name);

/// Runs `build`, attaching `loc` to a UserError that has no location yet.
template <class F>
auto located(const SourceLoc& loc, F&& build) -> decltype(build()) {
  try {
    return build();
  } catch (const UserError& e) {
    throw e.located(loc);
  }
}

std::string describe_types(const std::vector<ir::Type>& types);
std::vector<ir::Type> types_of(const std::vector<ir::Expr>& exprs);

/// An application `head(a, b)(c)` seen as the head and all its arguments `a, b, c`.
struct Spine {
  const Syntax* head;
  std::vector<const Syntax*> args;
  SourceLoc loc; ///< the head's location: where applications are reported
};
Spine spine_of(const Syntax& s);

/// A `toLocal(f(x))` argument split into the function part (built once the data types are known)
/// and the data arguments.
struct FunctionAndData {
  std::function<ir::Fun(const std::vector<ir::Type>&)> make_fun;
  std::vector<const Syntax*> data;
};

class Elaborator {
public:
  ir::Module run(const ModuleSyntax& module);

private:
  // ---- module level and names (elaborate.cpp)
  void declare_item(const NameLoc& name);
  void check_param_names(const std::vector<const NameLoc*>& names);
  ir::UserFunPtr userfun(const UserfunSyntax& u);
  ir::Program def(const DefSyntax& d);
  ir::Type type(const TypeSyntax& t);
  const ir::Expr* lookup(std::string_view name) const;
  bool is_userfun_name(std::string_view name) const;
  ir::UserFunPtr resolve_userfun(const std::string& name, const std::vector<ir::Type>& types,
                                 const SourceLoc& loc) const;
  [[noreturn]] void unknown_name(const Syntax& name) const;
  std::string size_var_list() const;

  // ---- sizes, literals and values (elaborate_values.cpp)
  arith::Expr size(const Syntax& s, bool declare = false);
  std::optional<Scalar> literal(const Syntax& s) const;
  ir::Boundary boundary(const Syntax& s) const;
  int tuple_index(const Syntax& s) const;
  ir::Expr value(const Syntax& s);
  std::vector<ir::Expr> values(std::span<const Syntax* const> syntaxes);
  ir::Expr call(const ir::Fun& fun, std::vector<ir::Expr> args, const SourceLoc& loc);
  [[noreturn]] void arity_error(const Primitive& p, const Spine& spine) const;
  ir::Expr apply(const Spine& spine);
  ir::Expr memory_applied(const Primitive& p, const Syntax& inner, const SourceLoc& loc);
  FunctionAndData split_data(const Syntax& s);
  ir::Fun memory(const Primitive& p, const ir::Fun& f) const;

  // ---- functions (elaborate_functions.cpp)
  ir::Fun function(const Syntax& s, const std::vector<ir::Type>& types);
  ir::Fun lambda(const Syntax& s, const std::vector<ir::Type>& types);
  ir::Fun named_function(const Spine& spine, const std::vector<ir::Type>& types);
  int vector_width(const Primitive& p, const Syntax& s);
  static ir::Type component_type(const ir::Type& t);
  ir::Type element_type(const Primitive& p, const std::vector<ir::Type>& types, int levels);
  ir::Fun primitive(const Primitive& p, std::span<const Syntax* const> args,
                    const std::vector<ir::Type>& types);
  ir::Expr composite_value(const Primitive& p, std::span<const Syntax* const> args,
                           const std::vector<ir::Expr>& data, const SourceLoc& loc);

  // ---- state ------------------------------------------------------------------------------------

  std::map<std::string, SourceLoc, std::less<>> item_locs_; ///< userfuns and defs
  std::map<std::string, ir::UserFunPtr, std::less<>> userfuns_;
  // per definition
  std::string def_name_;
  std::map<std::string, arith::Expr, std::less<>> size_vars_;
  std::vector<std::pair<std::string, ir::Expr>> scope_; ///< innermost last
};

} // namespace liftx::parse::elaborate_detail
