#include "cli/app.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <string>
#include <vector>

namespace liftx::cli {

namespace {
/// A message quoting a huge expression or type stays readable: its middle is left out.
std::string readable(const std::string& message) {
  constexpr size_t kHead = 1500, kTail = 300;
  if (message.size() <= kHead + kTail + 100)
    return message;
  return fmt::format("{} ... ({} characters left out) ... {}", message.substr(0, kHead),
                     message.size() - kHead - kTail, message.substr(message.size() - kTail));
}
} // namespace

int run(int argc, char** argv) {
  CLI::App app{"liftx: a compiler and auto-tuner for GPU stencils"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "liftx 0.1.0");
  add_simplify_command(app);
  add_eval_command(app);
  add_check_command(app);
  add_devices_command(app);
  add_roofline_command(app);
  add_launch_command(app);
  add_codegen_command(app);
  add_run_command(app);
  add_features_command(app);
  add_variants_command(app);
  add_model_commands(app);
  add_explore_command(app);
  add_adapt_command(app);
  add_evaluate_command(app);
  add_replay_command(app);
  add_collect_command(app);
  add_db_command(app);
  add_synth_command(app);
  add_calibrate_command(app);
  // CLI11 would say "A subcommand is required" for a misspelt command: name it instead.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names; // the documented ones; hidden workers are valid too
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known = known || sub->check_name(argv[1]);
      if (!sub->get_group().empty())
        names.push_back(sub->get_name());
    }
    if (!known) {
      fmt::print(stderr,
                 "liftx: unknown command '{}'; the commands are: {}\nRun with --help for "
                 "more information.\n",
                 argv[1], fmt::join(names, ", "));
      return kExitUserError;
    }
  }
  try {
    app.parse(argc, argv);
    return 0; // subcommand callbacks ran inside parse
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e); // prints the usage error
    return kExitUserError;
  } catch (const UserErrorAlreadyReported&) {
    return kExitUserError;
  } catch (const RunFailed&) {
    return 1;
  } catch (const UserError& e) {
    fmt::print(stderr, "{}\n", readable(e.what()));
    return kExitUserError;
  } catch (const InternalError& e) {
    fmt::print(stderr, "liftx: {}\nThis is a bug in liftx; please report it.\n", e.what());
    return kExitInternalError;
  } catch (const NotImplemented& e) {
    fmt::print(stderr, "liftx: {}\n", e.what());
    return kExitUserError;
  } catch (const std::exception& e) {
    fmt::print(stderr, "liftx: internal error: {}\n", e.what());
    return kExitInternalError;
  }
}

} // namespace liftx::cli
