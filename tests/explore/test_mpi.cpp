// explore/mpi/ without mpirun: a rank's device choice. `collect --mpi` itself runs under mpirun
// in tests/explore/test_mpi_collect.sh (ctest: mpi_collect).
#include "codegen/runtime/device.hpp"
#include "explore/mpi/collect_mpi.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace liftx;

TEST_CASE("device_for_local_rank: a P:D spec as given, else the local rank's matching device, "
          "in turn") {
  CHECK(explore::mpi::device_for_local_rank("7:3", 2) == "7:3"); // not opened: the rank's own
  // The CPU devices (PoCL's one here), as select_device's rule matches them.
  std::set<std::string> cpus;
  for (const runtime::DeviceProfile& device : runtime::list_devices())
    if (device.type == runtime::DeviceType::cpu)
      cpus.insert(device.index_spec());
  REQUIRE_FALSE(cpus.empty());
  const std::string first = runtime::select_device("cpu").profile.index_spec();
  CHECK(explore::mpi::device_for_local_rank("cpu", 0) == first);
  for (int local_rank = 0; local_rank < 5; ++local_rank)
    CHECK(cpus.count(explore::mpi::device_for_local_rank("cpu", local_rank)) == 1);
  // A name match, as select_device's: PoCL's platform.
  CHECK(explore::mpi::device_for_local_rank("pocl", 0) ==
        runtime::select_device("pocl").profile.index_spec());
  CHECK_THROWS_AS(explore::mpi::device_for_local_rank("no-such-device-name", 0), UserError);
}
