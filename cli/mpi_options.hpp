#pragma once
/// The `--mpi` options `collect` and `explore` share, and the report's line per rank.
#include "explore/mpi/rank_farm.hpp"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace liftx::cli {

struct MpiCommandOptions {
  bool mpi = false;
  int batch = 16; ///< --mpi-batch, where the command has it
  int silence_s = 30;
  std::string test_die; ///< "RANK:K" (testing)
};

/// `--mpi` (what it does: `what`), `--mpi-silence S`, hidden `--mpi-test-die RANK:K`, and with
/// `batch_option` `--mpi-batch N`.
void add_mpi_options(CLI::App* cmd, MpiCommandOptions& o, const char* what, bool batch_option);

/// The options as explore::mpi::MpiOptions, for the liftx command `command`; UserError for a
/// malformed --mpi-test-die.
explore::mpi::MpiOptions mpi_options(const MpiCommandOptions& o, const char* command);

/// Each rank's host, device and share, and the ranks given up for lost or failed.
void print_ranks(std::FILE* out, const std::vector<explore::mpi::RankReport>& ranks);

} // namespace liftx::cli
