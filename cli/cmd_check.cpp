// `liftx check FILE [--print]`: parses and type-checks a .lift file, lists each definition's type;
// `--print` prints the module back in canonical .lift syntax.
#include "cli/app.hpp"
#include "ir/parse/parser.hpp"

#include <fmt/format.h>

namespace liftx::cli {

void add_check_command(CLI::App& app) {
  struct Options {
    std::string file;
    bool print = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("check", "Parse and type-check a .lift file");
  cmd->add_option("file", options->file, ".lift source file")->required();
  cmd->add_flag("--print", options->print, "print the module back as canonical .lift");
  cmd->callback([options] {
    ir::Module module = parse::parse_file(options->file);
    if (options->print) {
      fmt::print("{}", ir::print(module));
      return;
    }
    for (const ir::UserFunPtr& f : module.userfuns) {
      std::string params;
      for (const ir::UserFunParam& p : f->params())
        params +=
            fmt::format("{}{}: {}", params.empty() ? "" : ", ", p.name, ir::scalar_name(p.kind));
      fmt::print("userfun {}({}) : {}\n", f->name(), params, ir::result_type_text(*f));
    }
    for (const ir::Program& p : module.programs) {
      std::string params;
      for (const ir::Expr& param : p.params)
        params += fmt::format("{}{}: {}", params.empty() ? "" : ", ", param.as<ir::Param>()->name,
                              param.type().to_string());
      fmt::print("def {}({}) : {}\n", p.name, params, p.result_type().to_string());
    }
  });
}

} // namespace liftx::cli
