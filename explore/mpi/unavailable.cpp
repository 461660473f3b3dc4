// Built when CMake found no MPI: `--mpi` is refused with a message that says how to get it.
#include "explore/mpi/rank_farm.hpp"

#include "support/error.hpp"

namespace liftx::explore::mpi {

bool available() {
  return false;
}

struct RankFarm::State {};

RankFarm::RankFarm(const CollectOptions&, const MpiOptions&) {
  throw UserError("--mpi: this liftx was built without MPI; install Open MPI (Debian: "
                  "libopenmpi-dev openmpi-bin) and configure the build again");
}

RankFarm::~RankFarm() = default;

// Never reached: the constructor refuses.
int RankFarm::rank() const {
  return 0;
}

int RankFarm::ranks() const {
  return 1;
}

RankReport RankFarm::serve() {
  LIFTX_UNREACHABLE("RankFarm without MPI");
}

Measurer& RankFarm::measurer() {
  LIFTX_UNREACHABLE("RankFarm without MPI");
}

std::vector<RankReport> RankFarm::finish() {
  LIFTX_UNREACHABLE("RankFarm without MPI");
}

} // namespace liftx::explore::mpi
