// `collect --mpi` and `explore --mpi` on the command line: what is refused before MPI starts.
// Runs under mpirun: tests/explore/test_mpi_collect.sh and test_mpi_explore.sh.
#include "cli_helpers.hpp"

using namespace cli_test;

TEST_CASE("collect --mpi refuses --plan-only and bad test hooks with exit 2, before MPI starts") {
  const std::string base = "collect stencils/jacobi2d5pt.lift --size 16 --sample 2 --quiet --db '" +
                           (scratch_dir() / "mpi.db").string() + "' --mpi";
  RunResult plan = liftx(base + " --plan-only --profile cpu");
  CHECK(plan.exit_code == 2);
  // A liftx without MPI refuses --mpi itself.
  CHECK((plan.err.find("--plan-only needs no device and no MPI") != std::string::npos ||
         plan.err.find("built without MPI") != std::string::npos));
  RunResult die = liftx(base + " --mpi-test-die 0:1");
  CHECK(die.exit_code == 2);
  CHECK(die.err.find("RANK must be > 0") != std::string::npos);
  RunResult batch = liftx(base + " --mpi-batch 0");
  CHECK(batch.exit_code == 2);
}

TEST_CASE(
    "explore --mpi refuses bad test hooks and silence limits with exit 2, before MPI starts") {
  const std::string base = "explore stencils/jacobi2d5pt.lift --size 16 --budget 2 --quiet --db '" +
                           (scratch_dir() / "mpi-explore.db").string() + "' --mpi";
  RunResult die = liftx(base + " --mpi-test-die 0:1");
  CHECK(die.exit_code == 2);
  CHECK(die.err.find("RANK must be > 0") != std::string::npos);
  RunResult silence = liftx(base + " --mpi-silence 1");
  CHECK(silence.exit_code == 2);
  RunResult no_batch_option = liftx(base + " --mpi-batch 4"); // explore hands out one at a time
  CHECK(no_batch_option.exit_code != 0);
}
