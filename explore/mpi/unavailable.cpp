// Built when CMake found no MPI: `--mpi` is refused with a message that says how to get it.
#include "explore/mpi/collect_mpi.hpp"

#include "support/error.hpp"

namespace liftx::explore::mpi {

bool available() {
  return false;
}

MpiCollectResult collect(const CollectOptions&, const MpiOptions&,
                         const std::function<void(const CollectProgress&)>&) {
  throw UserError("--mpi: this liftx was built without MPI; install Open MPI (Debian: "
                  "libopenmpi-dev openmpi-bin) and configure the build again");
}

} // namespace liftx::explore::mpi
