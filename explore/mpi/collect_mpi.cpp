// `liftx collect --mpi`: collect() with a RankFarm's Measurer (see collect_mpi.hpp).
#include "explore/mpi/collect_mpi.hpp"

#include "support/error.hpp"

namespace liftx::explore::mpi {

MpiCollectResult collect(const CollectOptions& options, const MpiOptions& mpi,
                         const std::function<void(const CollectProgress&)>& progress) {
  LIFTX_USER_CHECK(mpi.batch >= 1, "--mpi-batch must be at least 1");
  LIFTX_USER_CHECK(!options.plan_only,
                   "--plan-only needs no device and no MPI: plan in one process, then collect "
                   "with --mpi");
  RankFarm farm(options, mpi);
  MpiCollectResult result;
  result.rank = farm.rank();
  result.ranks = farm.ranks();
  if (farm.rank() != 0) {
    result.rank_reports.push_back(farm.serve());
    return result;
  }
  // On an error ~RankFarm stops the other ranks before rank 0 reports.
  result.summary = explore::collect(options, progress, &farm.measurer());
  result.rank_reports = farm.finish();
  return result;
}

} // namespace liftx::explore::mpi
