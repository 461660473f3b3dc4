#pragma once
/// User functions: scalar functions written in a documented subset of C (docs/language.md,
/// "User functions"). liftx parses the body, type-checks it, prints it as OpenCL C, evaluates it on
/// the host (for the interpreter) and counts its arithmetic operations (for features).
///
/// The C subset: parameters and locals of scalar types (bool, int, float, double); declarations
/// with initialiser (`float d = a - b;`), assignment (`=`, `+=`, `-=`, `*=`, `/=`), arithmetic
/// (+ - * / % unary -), comparisons, logical && || !, ternary ?:, casts `(float)x`, if/else,
/// blocks, `return`; literals as in C (`1`, `1.0f`, `1.0`, `true`); builtins sqrt, rsqrt, fabs,
/// exp, log, pow, sin, cos, fmin, fmax, min, max, clamp, floor, ceil, abs. Implicit conversions
/// follow C (int -> float in mixed arithmetic). Every path must return a value of the result type.
#include "ir/userfun/scalar.hpp"
#include "support/error.hpp"

#include <memory>
#include <span>
#include <string>
#include <vector>

namespace liftx::ir {

struct UserFunBody; // parsed statements; private to userfun.cpp

struct UserFunParam {
  std::string name;
  ScalarKind kind;
};

/// Operation counts of one call, following the executed path (a branch counts its taken side
/// when known; for counting without values, both sides' maximum). Used by features later.
struct OpCounts {
  int add = 0;     ///< + and - (binary)
  int mul = 0;     ///< *
  int div = 0;     ///< / and %
  int compare = 0; ///< comparisons and logical operators
  int special = 0; ///< builtin calls (sqrt, exp, fmin, ...)
  /// Of the add, mul, div and special operations, those on float or double values: the
  /// floating-point operations (exec::count_flops), where an int index computation is none.
  /// Already in the counters above, so not in total().
  int floating_point = 0;
  int total() const { return add + mul + div + compare + special; }
};

/// A parsed, type-checked user function. Immutable; shared by every IR node that calls it.
class UserFunDef {
public:
  /// Parses and type-checks `body` (the text between the braces, braces excluded). `body_loc` is
  /// the location of the body's first character, so diagnostics point into the original file.
  /// Throws UserError (located) on syntax or type errors.
  static std::shared_ptr<const UserFunDef> parse(std::string name, std::vector<UserFunParam> params,
                                                 ScalarKind result, std::string_view body,
                                                 SourceLoc body_loc = {});
  /// Any result: one kind is a scalar result; two or more a tuple, whose body returns one
  /// braced value per component, `return {a, b};`.
  static std::shared_ptr<const UserFunDef> parse(std::string name, std::vector<UserFunParam> params,
                                                 std::vector<ScalarKind> results,
                                                 std::string_view body, SourceLoc body_loc = {});

  const std::string& name() const { return name_; }
  const std::vector<UserFunParam>& params() const { return params_; }
  /// The result's kinds: one for a scalar result, two or more for a tuple.
  const std::vector<ScalarKind>& results() const { return results_; }
  bool returns_tuple() const { return results_.size() > 1; }
  /// The scalar result; an internal error for a tuple result (ask returns_tuple() first).
  ScalarKind result() const;
  /// The body text as written (between the braces), for printing back to .lift.
  const std::string& body_text() const { return body_text_; }

  /// Evaluates on the host with OpenCL C semantics of the declared types. `args` must match the
  /// parameter kinds (converted by the caller).
  Scalar evaluate(std::span<const Scalar> args) const;
  /// The same for any result: one value per results() kind written into `results`.
  void evaluate(std::span<const Scalar> args, std::span<Scalar> results) const;
  /// A complete OpenCL C function definition, e.g. `float jacobi5(float c, ...) { ... }`,
  /// re-printed from the parsed body (not the original text).
  /// A tuple result is returned as an OpenCL C struct, tuple_type_definition() (fields _0, _1,
  /// ...) named tuple_type_name(), e.g. `liftx_tuple_float_int`; both empty for a scalar result.
  std::string to_opencl() const;
  std::string tuple_type_name() const;
  std::string tuple_type_definition() const;
  /// Whether to_opencl() calls the int helpers (int + - * / % and negation print as calls).
  bool uses_opencl_int_helpers() const;
  /// OpenCL C definitions of those helpers, to precede the user functions in a kernel: they
  /// define what C leaves undefined as the interpreter does (wrapping; INT_MIN / -1 is INT_MIN
  /// and x % -1 is 0).
  static std::string opencl_int_helpers();
  /// Operation counts of one call, the maximum over branches.
  OpCounts op_counts() const;

  /// Built-in user functions: `add`, `mult` (float), `add_int`, `mult_int`, `add_double`,
  /// `mult_double`. The .lift parser and the DSL resolve `add`/`mult` to the variant matching the
  /// argument types. Returns nullptr for an unknown name.
  static std::shared_ptr<const UserFunDef> builtin(std::string_view name);

  ~UserFunDef();
  UserFunDef(std::string name, std::vector<UserFunParam> params, std::vector<ScalarKind> results,
             std::string body_text, std::unique_ptr<const UserFunBody> body);

private:
  std::string name_;
  std::vector<UserFunParam> params_;
  std::vector<ScalarKind> results_;
  std::string body_text_;
  std::unique_ptr<const UserFunBody> body_;
};

using UserFunPtr = std::shared_ptr<const UserFunDef>;

/// Whether `name` is a C or OpenCL C keyword, type or built-in a generated identifier must avoid.
bool is_reserved_in_opencl(std::string_view name);

/// The result type as written in .lift: `float`, or `(float, int)` for a tuple.
std::string result_type_text(const UserFunDef& f);

/// Structural identity of user functions: same name, parameter types, result type and body text.
bool same_userfun(const UserFunDef& a, const UserFunDef& b);

} // namespace liftx::ir
