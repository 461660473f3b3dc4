#include "ir/userfun/userfun.hpp"

#include "ir/userfun/ast.hpp"

#include <fmt/format.h>

#include <map>

namespace liftx::ir {

UserFunDef::UserFunDef(std::string name, std::vector<UserFunParam> params, ScalarKind result,
                       std::string body_text, std::unique_ptr<const UserFunBody> body)
    : name_(std::move(name)), params_(std::move(params)), result_(result),
      body_text_(std::move(body_text)), body_(std::move(body)) {
  LIFTX_INTERNAL_CHECK(body_ != nullptr, "userfun {} without a parsed body", name_);
}

UserFunDef::~UserFunDef() = default;

std::shared_ptr<const UserFunDef> UserFunDef::parse(std::string name,
                                                    std::vector<UserFunParam> params,
                                                    ScalarKind result, std::string_view body,
                                                    SourceLoc body_loc) {
  auto parsed = userfun_detail::parse_body(name, params, result, body, body_loc);
  // The OpenCL C printing parenthesises every compound operand and spells int arithmetic as
  // helper calls, so it can nest deeper than the source did; OpenCL compilers limit nesting too
  // (clang: 256 brackets). The printed body must stay within the parser's own limit.
  // Any other refusal of the printed text is a printer bug, and surfaces as one.
  try {
    (void)userfun_detail::parse_body(name, params, result, userfun_detail::print_body(*parsed),
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
  return std::make_shared<const UserFunDef>(std::move(name), std::move(params), result,
                                            std::string(body), std::move(parsed));
}

Scalar UserFunDef::evaluate(std::span<const Scalar> args) const {
  LIFTX_INTERNAL_CHECK(args.size() == params_.size(), "userfun {} called with {} arguments, not {}",
                       name_, args.size(), params_.size());
  for (size_t i = 0; i < args.size(); ++i)
    LIFTX_INTERNAL_CHECK(
        kind_of(args[i]) == params_[i].kind, "userfun {}: argument {} is {}, parameter '{}' is {}",
        name_, i, scalar_name(kind_of(args[i])), params_[i].name, scalar_name(params_[i].kind));
  return userfun_detail::evaluate_body(name_, *body_, args);
}

std::string UserFunDef::to_opencl() const {
  std::vector<std::string> params;
  for (const auto& p : params_)
    params.push_back(fmt::format("{} {}", scalar_name(p.kind), p.name));
  // `f()` is an old-style declaration in C; `f(void)` is the prototype.
  return fmt::format("{} {}({}) {{\n{}}}", scalar_name(result_), name_,
                     params.empty() ? std::string("void")
                                    : fmt::format("{}", fmt::join(params, ", ")),
                     userfun_detail::print_body(*body_));
}

bool UserFunDef::uses_opencl_int_helpers() const {
  // No user name may start with liftx_ (is_reserved_in_opencl): any occurrence is a helper.
  return to_opencl().find("liftx_") != std::string::npos;
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
  if (a.name() != b.name() || a.result() != b.result() || a.body_text() != b.body_text() ||
      a.params().size() != b.params().size())
    return false;
  for (size_t i = 0; i < a.params().size(); ++i)
    if (a.params()[i].name != b.params()[i].name || a.params()[i].kind != b.params()[i].kind)
      return false;
  return true;
}

} // namespace liftx::ir
