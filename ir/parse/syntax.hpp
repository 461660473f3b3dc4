#pragma once
/// The syntax tree of a .lift module, as written, with source locations. Produced by
/// parse_syntax and turned into the typed IR by elaborate (see elaborate.hpp). Internal to
/// liftx_parse.
#include "ir/userfun/scalar.hpp"
#include "support/error.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace liftx::parse {

struct Syntax;
using SyntaxPtr = std::unique_ptr<const Syntax>;

struct NameLoc {
  std::string name;
  SourceLoc loc;
};

/// One expression node. Arithmetic operators appear here because size arguments (`split(N /^ 2)`)
/// share the argument list with ordinary expressions; elaboration decides which is which.
struct Syntax {
  enum class Kind : uint8_t {
    Name,      ///< text
    IntLit,    ///< int_value
    FloatLit,  ///< real_value (a float literal, `1.5f`)
    DoubleLit, ///< real_value
    BoolLit,   ///< bool_value
    Apply,     ///< operands[0] applied to operands[1..]
    Index,     ///< operands[0][operands[1]]
    Lambda,    ///< params => operands[0]
    Binary,    ///< operands[0] ops[0] operands[1] ops[1] ...: a left-to-right chain of one
               ///< precedence (`a + b - c`, `a * b /^ c`); text is ops[0]
    Negate,    ///< -operands[0]
    Select,    ///< (operands[0] text operands[1] ? operands[2] : operands[3]), text a comparison
  };
  Kind kind;
  SourceLoc
      loc; ///< first token; for Apply the callee's; for Index the '['; Binary: its first operator
  std::string text;
  int64_t int_value = 0;
  double real_value = 0;
  float float_value = 0; ///< FloatLit, parsed from the text as a float (no double rounding)
  bool bool_value = false;
  std::vector<SyntaxPtr> operands;
  std::vector<NameLoc> params; ///< Lambda
  std::vector<NameLoc> ops;    ///< Binary: the operators between the operands, with locations
  int depth = 1;               ///< height of this subtree (bounded by the parser)
};

/// `bool | int | float | double | (T, U, ...) | [T]size`
struct TypeSyntax {
  enum class Kind : uint8_t { Scalar, Tuple, Array };
  Kind kind = Kind::Scalar;
  SourceLoc loc;
  ir::ScalarKind scalar = ir::ScalarKind::Float;
  std::vector<TypeSyntax> elements; ///< Tuple: components; Array: {element}
  SyntaxPtr length;                 ///< Array
};

struct UserfunParamSyntax {
  std::string name;
  SourceLoc loc;
  ir::ScalarKind kind;
};

struct UserfunSyntax {
  NameLoc name;
  std::vector<UserfunParamSyntax> params;
  std::vector<ir::ScalarKind> result; ///< one kind, or a tuple's components
  std::string body;
  SourceLoc body_loc;
};

struct DefParamSyntax {
  NameLoc name;
  TypeSyntax type;
};

/// `aos(a, b)`, `aosoa(32, a, b)`: grids stored as the fields of one record per element.
struct LayoutSyntax {
  NameLoc layout;    ///< "aos" or "aosoa"
  int64_t block = 1; ///< aosoa: elements per block
  std::vector<NameLoc> fields;
};

struct DefSyntax {
  SourceLoc loc; ///< the `def` keyword
  NameLoc name;
  std::vector<DefParamSyntax> params;
  std::vector<LayoutSyntax> layouts; ///< the optional `layout ...` clause
  SyntaxPtr body;
};

struct ModuleSyntax {
  std::vector<std::variant<UserfunSyntax, DefSyntax>> items;
};

/// Parses a whole module. Throws a located UserError on the first syntax error.
ModuleSyntax parse_syntax(std::string_view source, const std::string& file);

/// Keywords that cannot name parameters, user functions or definitions.
bool is_keyword(std::string_view name);
/// `bool`, `int`, `float`, `double`.
std::optional<ir::ScalarKind> scalar_kind_named(std::string_view name);

} // namespace liftx::parse
