#include "explore/mpi/rank_farm.hpp"

#include "runtime/device.hpp"

#include <algorithm>

namespace liftx::explore::mpi {

std::string device_for_local_rank(std::string_view spec, int local_rank) {
  if (runtime::parse_index_spec(spec))
    return std::string(spec); // the rank's own, as given (MPMD: it may exist on its node only)
  const std::vector<target::DeviceProfile> matching = runtime::matching_devices(spec);
  if (matching.empty())
    return runtime::select_device(spec).profile.index_spec(); // its message lists the devices
  return matching[static_cast<size_t>(std::max(local_rank, 0)) % matching.size()].index_spec();
}

} // namespace liftx::explore::mpi
