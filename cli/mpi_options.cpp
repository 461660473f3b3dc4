#include "cli/mpi_options.hpp"

#include "support/error.hpp"

#include <fmt/format.h>

namespace liftx::cli {

void add_mpi_options(CLI::App* cmd, MpiCommandOptions& o, const char* what, bool batch_option) {
  cmd->add_flag("--mpi", o.mpi, what);
  if (batch_option)
    cmd->add_option("--mpi-batch", o.batch,
                    "with --mpi: jobs handed to a rank at a time; a rank that dies loses at most "
                    "these (default 16)")
        ->check(CLI::Range(1, 100000));
  cmd->add_option("--mpi-silence", o.silence_s,
                  "with --mpi: seconds after which a silent rank is given up for lost and its jobs "
                  "go to the others (default 30)")
      ->check(CLI::Range(2, 86400));
  cmd->add_option("--mpi-test-die", o.test_die,
                  "RANK:K: rank RANK kills itself after K results (testing)")
      ->group("");
}

explore::mpi::MpiOptions mpi_options(const MpiCommandOptions& o, const char* command) {
  explore::mpi::MpiOptions mpi;
  mpi.batch = o.batch;
  mpi.silence_limit = std::chrono::seconds(o.silence_s);
  mpi.command = command;
  if (o.test_die.empty())
    return mpi;
  const size_t colon = o.test_die.find(':');
  try {
    mpi.die_rank = std::stoi(o.test_die.substr(0, colon));
    mpi.die_after = colon == std::string::npos ? 0 : std::stoll(o.test_die.substr(colon + 1));
  } catch (const std::exception&) {
    throw UserError(fmt::format("--mpi-test-die: RANK:K, not '{}'", o.test_die));
  }
  LIFTX_USER_CHECK(mpi.die_rank >= 1 && mpi.die_after >= 1,
                   "--mpi-test-die: RANK must be > 0 (rank 0 writes the database) and K >= 1");
  return mpi;
}

void print_ranks(std::FILE* out, const std::vector<explore::mpi::RankReport>& ranks) {
  for (const explore::mpi::RankReport& r : ranks)
    fmt::print(out, "rank {:<4}  {} on {}: {} measured{}\n", r.rank, r.host,
               r.device_key.empty() ? "no device" : r.device_key, r.measured,
               r.problem.empty() ? ""
                                 : fmt::format(" ({}: {})", r.lost ? "lost" : "failed", r.problem));
}

} // namespace liftx::cli
