#include "ir/userfun/userfun.hpp"

#include "ir/userfun/ast.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>

namespace liftx::ir {
namespace {
constexpr const char* kIntHelpers[] = {"add", "sub", "mul", "neg", "div", "rem"};
} // namespace

UserFunDef::UserFunDef(std::string name, std::vector<UserFunParam> params,
                       std::vector<ScalarKind> results, std::string body_text,
                       std::unique_ptr<const UserFunBody> body)
    : name_(std::move(name)), params_(std::move(params)), results_(std::move(results)),
      body_text_(std::move(body_text)), body_(std::move(body)) {
  LIFTX_INTERNAL_CHECK(body_ != nullptr, "userfun {} without a parsed body", name_);
  LIFTX_INTERNAL_CHECK(!results_.empty(), "userfun {} without a result", name_);
}

ScalarKind UserFunDef::result() const {
  LIFTX_INTERNAL_CHECK(!returns_tuple(), "userfun {} returns a tuple, not one scalar", name_);
  return results_.front();
}

UserFunDef::~UserFunDef() = default;

std::shared_ptr<const UserFunDef> UserFunDef::parse(std::string name,
                                                    std::vector<UserFunParam> params,
                                                    ScalarKind result, std::string_view body,
                                                    SourceLoc body_loc) {
  return parse(std::move(name), std::move(params), std::vector<ScalarKind>{result}, body, body_loc);
}

std::shared_ptr<const UserFunDef> UserFunDef::parse(std::string name,
                                                    std::vector<UserFunParam> params,
                                                    std::vector<ScalarKind> results,
                                                    std::string_view body, SourceLoc body_loc) {
  if (results.empty())
    throw UserError(fmt::format("userfun {} needs a result type", name),
                    SourceLoc{body_loc.file, 0, 0});
  auto parsed = userfun_detail::parse_body(name, params, results, body, body_loc);
  // The OpenCL C printing parenthesises every compound operand and spells int arithmetic as
  // helper calls, so it can nest deeper than the source did; OpenCL compilers limit nesting too
  // (clang: 256 brackets). The printed body must stay within the parser's own limit.
  // Any other refusal of the printed text is a printer bug, and surfaces as one.
  try {
    (void)userfun_detail::parse_body(name, params, results, userfun_detail::print_body(*parsed),
                                     SourceLoc{});
  } catch (const userfun_detail::NestingTooDeep&) {
    throw UserError(fmt::format("userfun {}: nests too deeply once printed as OpenCL C (every "
                                "compound operand gets parentheses); split the expression with "
                                "local variables",
                                name),
                    body_loc);
  } catch (const UserError& e) {
    LIFTX_INTERNAL_CHECK(false, "userfun {}: the OpenCL C printing does not parse back: {}", name,
                         e.what());
  }
  return std::make_shared<const UserFunDef>(std::move(name), std::move(params), std::move(results),
                                            std::string(body), std::move(parsed));
}

Scalar UserFunDef::evaluate(std::span<const Scalar> args) const {
  Scalar r;
  evaluate(args, std::span<Scalar>(&r, 1));
  return r;
}

void UserFunDef::evaluate(std::span<const Scalar> args, std::span<Scalar> results) const {
  LIFTX_INTERNAL_CHECK(results.size() == results_.size(), "userfun {} has {} results, not {}",
                       name_, results_.size(), results.size());
  LIFTX_INTERNAL_CHECK(args.size() == params_.size(), "userfun {} called with {} arguments, not {}",
                       name_, args.size(), params_.size());
  for (size_t i = 0; i < args.size(); ++i)
    LIFTX_INTERNAL_CHECK(
        kind_of(args[i]) == params_[i].kind, "userfun {}: argument {} is {}, parameter '{}' is {}",
        name_, i, scalar_name(kind_of(args[i])), params_[i].name, scalar_name(params_[i].kind));
  userfun_detail::evaluate_body(name_, *body_, args, results);
}

std::string UserFunDef::to_opencl() const {
  std::vector<std::string> params;
  for (const auto& p : params_)
    params.push_back(fmt::format("{} {}", scalar_name(p.kind), p.name));
  const std::string tuple = tuple_type_name();
  // `f()` is an old-style declaration in C; `f(void)` is the prototype.
  return fmt::format("{} {}({}) {{\n{}}}", tuple.empty() ? scalar_name(results_[0]) : tuple, name_,
                     params.empty() ? std::string("void")
                                    : fmt::format("{}", fmt::join(params, ", ")),
                     userfun_detail::print_body(*body_, tuple));
}

std::string UserFunDef::tuple_type_name() const {
  if (!returns_tuple())
    return {};
  std::string name = "liftx_tuple";
  for (ScalarKind k : results_)
    name += fmt::format("_{}", scalar_name(k));
  return name;
}

std::string UserFunDef::tuple_type_definition() const {
  if (!returns_tuple())
    return {};
  std::string fields;
  for (size_t k = 0; k < results_.size(); ++k)
    fields += fmt::format(" {} _{};", scalar_name(results_[k]), k);
  return fmt::format("typedef struct {{{} }} {};", fields, tuple_type_name());
}

std::string result_type_text(const UserFunDef& f) {
  if (!f.returns_tuple())
    return scalar_name(f.results()[0]);
  std::vector<std::string> kinds;
  for (ScalarKind k : f.results())
    kinds.emplace_back(scalar_name(k));
  return fmt::format("({})", fmt::join(kinds, ", "));
}

bool UserFunDef::uses_opencl_int_helpers() const {
  // No user name may start with liftx_ (is_reserved_in_opencl): a call of one is a helper (the
  // tuple struct's name starts so too, but is never called).
  const std::string text = to_opencl();
  return std::any_of(std::begin(kIntHelpers), std::end(kIntHelpers), [&](const char* helper) {
    return text.find(fmt::format("liftx_{}(", helper)) != std::string::npos;
  });
}

std::string UserFunDef::opencl_int_helpers() {
  // as_int/as_uint reinterpret bits: unsigned arithmetic wraps, and nothing is
  // implementation-defined on the way back.
  return "int liftx_add(int a, int b) { return as_int(as_uint(a) + as_uint(b)); }\n"
         "int liftx_sub(int a, int b) { return as_int(as_uint(a) - as_uint(b)); }\n"
         "int liftx_mul(int a, int b) { return as_int(as_uint(a) * as_uint(b)); }\n"
         "int liftx_neg(int a) { return as_int(0u - as_uint(a)); }\n"
         "int liftx_div(int a, int b) { return b == -1 ? liftx_neg(a) : a / b; }\n"
         "int liftx_rem(int a, int b) { return b == -1 ? 0 : a % b; }\n";
}

OpCounts UserFunDef::op_counts() const {
  return userfun_detail::count_body(*body_);
}

std::shared_ptr<const UserFunDef> UserFunDef::builtin(std::string_view name) {
  // Parsed once; the definitions are immutable and shared.
  static const std::map<std::string, std::shared_ptr<const UserFunDef>, std::less<>> builtins = [] {
    std::map<std::string, std::shared_ptr<const UserFunDef>, std::less<>> table;
    const std::pair<const char*, ScalarKind> kinds[] = {
        {"", ScalarKind::Float}, {"_int", ScalarKind::Int}, {"_double", ScalarKind::Double}};
    for (const auto& [suffix, kind] : kinds) {
      for (const auto& [op, body] :
           {std::pair{"add", "return x + y;"}, {"mult", "return x * y;"}}) {
        const std::string name = fmt::format("{}{}", op, suffix);
        table[name] = parse(name, {{"x", kind}, {"y", kind}}, kind, body);
      }
    }
    return table;
  }();
  const auto it = builtins.find(name);
  return it == builtins.end() ? nullptr : it->second;
}

bool same_userfun(const UserFunDef& a, const UserFunDef& b) {
  if (&a == &b)
    return true;
  if (a.name() != b.name() || a.results() != b.results() || a.body_text() != b.body_text() ||
      a.params().size() != b.params().size())
    return false;
  for (size_t i = 0; i < a.params().size(); ++i)
    if (a.params()[i].name != b.params()[i].name || a.params()[i].kind != b.params()[i].kind)
      return false;
  return true;
}

} // namespace liftx::ir
