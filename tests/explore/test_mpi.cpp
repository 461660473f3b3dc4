// explore/mpi/ without mpirun: a rank's device choice. `collect --mpi` itself runs under mpirun
// in tests/explore/test_mpi_collect.sh (ctest: mpi_collect).
#include "explore/mpi/rank_farm.hpp"
#include "runtime/device.hpp"
#include "support/error.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace liftx;

TEST_CASE("device_for_local_rank: a P:D spec as given, else the local rank's matching device, "
          "in turn") {
  CHECK(explore::mpi::device_for_local_rank("7:3", 2) == "7:3"); // not opened: the rank's own
  // The CPU devices (PoCL's one here), as runtime::matching_devices gives them.
  std::set<std::string> cpus;
  for (const target::DeviceProfile& device : runtime::list_devices())
    if (device.type == target::DeviceType::cpu)
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

TEST_CASE("runtime::matching_devices: what select_device opens the first of") {
  for (const char* spec : {"cpu", "pocl", "0:0"}) {
    CAPTURE(spec);
    const std::vector<target::DeviceProfile> matching = runtime::matching_devices(spec);
    REQUIRE_FALSE(matching.empty());
    CHECK(matching.front().index_spec() == runtime::select_device(spec).profile.index_spec());
  }
  CHECK(runtime::matching_devices("0:0").size() == 1);
  CHECK(runtime::matching_devices("7:3").empty());
  CHECK(runtime::matching_devices("no-such-device-name").empty());
  CHECK(runtime::matching_devices("").empty());
}
