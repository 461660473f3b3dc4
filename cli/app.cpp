#include "cli/app.hpp"

#include "support/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <optional>
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

/// Edits (insertions, deletions, substitutions) between two words.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// " (did you mean 'explore'?)" for the candidate closest to `word` when it is close (a third
/// of the word's letters, at least two), else "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    const size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best = &candidate;
      best_distance = d;
    }
  }
  return best ? fmt::format(" (did you mean '{}'?)", *best) : std::string();
}

/// The long flags of `command` ("--size", ...), for suggestions.
std::vector<std::string> flags_of(const CLI::App& command) {
  std::vector<std::string> flags;
  for (const CLI::Option* option : command.get_options())
    for (const std::string& name : option->get_lnames())
      flags.push_back("--" + name);
  return flags;
}

/// The first argument of `argv` after the command that looks like a flag and is none of its.
std::optional<std::string> unknown_flag(const CLI::App& command, int argc, char** argv) {
  const std::vector<std::string> flags = flags_of(command);
  for (int i = 2; i < argc; ++i) {
    std::string word = argv[i];
    if (!word.starts_with("--") || word == "--")
      continue;
    word = word.substr(0, word.find('='));
    if (std::find(flags.begin(), flags.end(), word) == flags.end())
      return word;
  }
  return std::nullopt;
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
  add_route_command(app);
  add_replay_command(app);
  add_collect_command(app);
  add_db_command(app);
  add_synth_command(app);
  add_calibrate_command(app);
  std::vector<std::string> names; // the documented commands; hidden workers are valid too
  for (const CLI::App* sub : app.get_subcommands({}))
    if (!sub->get_group().empty())
      names.push_back(sub->get_name());
  // `liftx help [COMMAND]`, as `liftx [COMMAND] --help`.
  if (argc > 1 && std::string(argv[1]) == "help") {
    if (argc == 2) {
      fmt::print("{}", app.help());
      return 0;
    }
    for (const CLI::App* sub : app.get_subcommands({}))
      if (sub->check_name(argv[2])) {
        fmt::print("{}", sub->help("liftx"));
        return 0;
      }
    fmt::print(stderr, "liftx help: unknown command '{}'{}; the commands are: {}\n", argv[2],
               did_you_mean(argv[2], names), fmt::join(names, ", "));
    return kExitUserError;
  }
  // CLI11 would say "A subcommand is required" for a misspelt command: name it instead.
  const CLI::App* command = nullptr;
  if (argc > 1 && argv[1][0] != '-') {
    for (const CLI::App* sub : app.get_subcommands({}))
      if (sub->check_name(argv[1]))
        command = sub;
    if (!command) {
      fmt::print(stderr,
                 "liftx: unknown command '{}'{}; the commands are: {}\nRun `liftx help "
                 "COMMAND` for a command's options.\n",
                 argv[1], did_you_mean(argv[1], names), fmt::join(names, ", "));
      return kExitUserError;
    }
  }
  try {
    app.parse(argc, argv);
    return 0; // subcommand callbacks ran inside parse
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // An unknown flag is named with the nearest flag of its command, not CLI11's raw text.
    if (const std::optional<std::string> flag =
            command ? unknown_flag(*command, argc, argv) : std::nullopt) {
      fmt::print(stderr, "liftx {}: unknown option '{}'{}; `liftx help {}` lists its options\n",
                 command->get_name(), *flag, did_you_mean(*flag, flags_of(*command)),
                 command->get_name());
      return kExitUserError;
    }
    // Any other usage error of a command (a value out of range, a missing option): CLI11's
    // reason, named with the command and where its options are listed.
    if (command) {
      fmt::print(stderr, "liftx {}: {}; `liftx help {}` lists its options\n", command->get_name(),
                 e.what(), command->get_name());
      return kExitUserError;
    }
    // No command: `liftx`, `liftx --bogus`. Say what comes first and what the commands are.
    const std::string first = argc > 1 ? argv[1] : "";
    const std::string reason =
        first.empty() ? std::string("a command is required")
        : first.starts_with("-")
            ? fmt::format("unknown option '{}'{}: options follow a command", first,
                          did_you_mean(first.substr(0, first.find('=')), {"--help", "--version"}))
            : std::string(e.what());
    fmt::print(stderr,
               "liftx: {}; the commands are: {}\nRun `liftx help` for an overview, `liftx help "
               "COMMAND` for a command's options.\n",
               reason, fmt::join(names, ", "));
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
