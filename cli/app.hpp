#pragma once
/// The `liftx` command line. Exit codes: 0 success, 1 a check that failed (e.g. a result
/// mismatch), 2 bad input (user error, bad arguments), 3 internal error.
#include <CLI/CLI.hpp>

namespace liftx::cli {

inline constexpr int kExitUserError = 2;
inline constexpr int kExitInternalError = 3;

/// Thrown by a subcommand that already printed its message: exit with kExitUserError.
struct UserErrorAlreadyReported {};
/// Thrown by a subcommand whose check failed (e.g. a kernel with a wrong result): exit 1.
struct RunFailed {};

/// Parses arguments, runs the chosen subcommand, maps errors to messages and exit codes.
int run(int argc, char** argv);

// Subcommands register themselves on the app; each returns a callback run after parsing.
void add_simplify_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_check_command(CLI::App& app);
void add_devices_command(CLI::App& app);
void add_roofline_command(CLI::App& app);
void add_launch_command(CLI::App& app);
void add_codegen_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_features_command(CLI::App& app);
void add_variants_command(CLI::App& app);
void add_model_commands(CLI::App& app); ///< train, rank
void add_explore_command(CLI::App& app);
void add_evaluate_command(CLI::App& app);
void add_route_command(CLI::App& app);  ///< per-kind routes of a model (model/routes.hpp)
void add_replay_command(CLI::App& app); ///< exploration replayed on measured data
void add_collect_command(CLI::App& app);
void add_db_command(CLI::App& app);
void add_synth_command(CLI::App& app); ///< synthetic stencils (synth/)
void add_calibrate_command(CLI::App& app);
void add_adapt_command(CLI::App& app); ///< input-adaptive selection (adapt/adapt.hpp)

} // namespace liftx::cli
