// Fuzz target: user-function bodies (the C subset of `userfun` definitions).
//
// Input: a first line `RESULT [KIND NAME]...` (kinds: bool int float double; RESULT one kind or
// a tuple's kinds joined by commas, `float,int`), then the body (the text between the braces).
// Asserts: the body parses and type-checks or is rejected with a UserError; a parsed one prints as
// OpenCL C, counts its operations and evaluates on a few argument sets to a value of its result
// kind (or a UserError, e.g. an integer division by zero); its OpenCL C body parses back to a
// function that evaluates to the same values.
#include "ir/userfun/userfun.hpp"
#include "fuzz/fuzz_common.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

using namespace liftx;
using ir::Scalar;
using ir::ScalarKind;

namespace {

std::optional<ScalarKind> kind_named(const std::string& word) {
  for (ScalarKind k : {ScalarKind::Bool, ScalarKind::Int, ScalarKind::Float, ScalarKind::Double})
    if (word == ir::scalar_name(k))
      return k;
  return std::nullopt;
}

bool same_value(const Scalar& a, const Scalar& b) {
  if (a.index() != b.index())
    return false;
  if (const float* x = std::get_if<float>(&a))
    return std::bit_cast<uint32_t>(*x) == std::bit_cast<uint32_t>(std::get<float>(b)) ||
           (std::isnan(*x) && std::isnan(std::get<float>(b)));
  if (const double* x = std::get_if<double>(&a))
    return std::bit_cast<uint64_t>(*x) == std::bit_cast<uint64_t>(std::get<double>(b)) ||
           (std::isnan(*x) && std::isnan(std::get<double>(b)));
  return a == b;
}

/// Argument sets: zeros, ones, negative and fractional values, extremes.
std::vector<Scalar> arguments(const std::vector<ir::UserFunParam>& params, int set) {
  static const double kValues[][3] = {
      {0, 0, 0}, {1, 2, 3}, {-1.5, 0.25, 7}, {2147483647, -2147483648.0, 1e30}};
  std::vector<Scalar> args;
  for (size_t i = 0; i < params.size(); ++i)
    args.push_back(ir::convert(Scalar{kValues[set][i % 3]}, params[i].kind));
  return args;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = fuzz::as_text(data, size);
  const size_t newline = input.find('\n');
  if (newline == std::string_view::npos)
    return 0;
  const std::vector<std::string> header = fuzz::split_words(input.substr(0, newline));
  if (header.empty() || header.size() % 2 == 0 || header.size() > 9)
    return 0;
  std::vector<ScalarKind> results;
  for (size_t start = 0; start <= header[0].size();) {
    const size_t comma = std::min(header[0].find(',', start), header[0].size());
    const std::optional<ScalarKind> kind = kind_named(header[0].substr(start, comma - start));
    if (!kind || results.size() == 8)
      return 0;
    results.push_back(*kind);
    start = comma + 1;
  }
  std::vector<ir::UserFunParam> params;
  for (size_t i = 1; i < header.size(); i += 2) {
    const std::optional<ScalarKind> kind = kind_named(header[i]);
    if (!kind)
      return 0;
    params.push_back({header[i + 1], *kind});
  }
  const std::string_view body = input.substr(newline + 1);

  ir::UserFunPtr f;
  if (!fuzz::expect_user_errors([&] { f = ir::UserFunDef::parse("f", params, results, body); }))
    return 0;
  const std::string opencl = f->to_opencl();
  // A tuple's returns are compound literals in OpenCL C; the source form drops the type.
  std::string source_form = opencl;
  if (f->returns_tuple())
    for (size_t at; (at = source_form.find("(" + f->tuple_type_name() + ")")) != std::string::npos;)
      source_form.erase(at, f->tuple_type_name().size() + 2);
  (void)f->op_counts();
  // The printed body parses back (the text between the outermost braces).
  const size_t open = source_form.find('{'), close = source_form.rfind('}');
  if (open == std::string::npos || close == std::string::npos || close < open)
    fuzz::fail("to_opencl printed no body", opencl);
  ir::UserFunPtr reparsed;
  if (!fuzz::expect_user_errors([&] {
        reparsed = ir::UserFunDef::parse(
            "f", params, results, std::string_view(source_form).substr(open + 1, close - open - 1));
      }))
    fuzz::fail("the OpenCL C printing does not parse back", opencl);
  for (int set = 0; set < 4; ++set) {
    const std::vector<Scalar> args = arguments(params, set);
    std::vector<Scalar> value(results.size()), again(results.size());
    const bool evaluated = fuzz::expect_user_errors([&] { f->evaluate(args, value); });
    const bool reevaluated = fuzz::expect_user_errors([&] { reparsed->evaluate(args, again); });
    if (evaluated != reevaluated)
      fuzz::fail("the OpenCL C printing evaluates differently", opencl);
    for (size_t k = 0; evaluated && k < results.size(); ++k) {
      if (ir::kind_of(value[k]) != results[k])
        fuzz::fail("evaluation returned another kind than the result's", opencl);
      if (!same_value(value[k], again[k]))
        fuzz::fail("the OpenCL C printing evaluates differently", opencl);
    }
  }
  return 0;
}
