// `liftx simplify "EXPR" [--range NAME=LO:HI]...`: prints the canonical, simplified expression.
#include "cli/app.hpp"
#include "cli/options.hpp"
#include "ir/arith/expr.hpp"
#include "support/error.hpp"

#include <fmt/format.h>

namespace liftx::cli {

void add_simplify_command(CLI::App& app) {
  struct Options {
    std::string expression;
    std::vector<std::string> ranges;
    bool as_c = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("simplify", "Simplify an integer index expression");
  cmd->add_option("expression", options->expression, "e.g. \"(i*16+j)/16\"")->required();
  cmd->add_option("--range", options->ranges,
                  "NAME=LO:HI, HI exclusive; NAME=LO: is unbounded above (sizes: N=1:)")
      ->allow_extra_args(false); // one value per --range: the expression may follow it
  cmd->add_flag("--c", options->as_c, "print as OpenCL C");
  cmd->callback([options] {
    std::map<std::string, arith::Range, std::less<>> ranges;
    for (const std::string& text : options->ranges) {
      auto [name, range] = parse_range_option(text);
      LIFTX_USER_CHECK(ranges.emplace(name, range).second,
                       "--range {}: the range of {} is given twice", text, name);
    }
    arith::Expr e = arith::parse_user_expression(options->expression, ranges);
    fmt::print("{}\n", options->as_c ? arith::to_c(e) : e.to_string());
  });
}

} // namespace liftx::cli
