// perfdb::ScratchDir: a folder of its own per measuring process, swept when its owner is gone,
// never while it lives (explore --mpi starts its ranks together: each sweeps as it starts).
#include "perfdb/record.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace liftx;

TEST_CASE("ScratchDir: folders made at the same time survive each other's sweeps") {
  // Each new ScratchDir sweeps the folders with its prefix whose lock it can take. A folder
  // whose lock file existed before it was locked could be taken by a sweep in between and
  // removed under its owner (or its owner then failed to lock it). Before the fix this lost
  // folders on every run here.
  const std::string prefix = "liftx-scratch-race-" + std::to_string(::getpid()) + "-";
  std::atomic<int> lost{0};
  std::vector<std::thread> makers;
  for (int t = 0; t < 4; ++t)
    makers.emplace_back([&] {
      for (int i = 0; i < 150; ++i)
        try {
          const perfdb::ScratchDir scratch(prefix);
          if (!fs::exists(scratch.path() / "lock"))
            ++lost;
        } catch (const std::exception&) {
          ++lost; // e.g. "cannot lock": another maker's sweep held the new lock
        }
    });
  for (std::thread& maker : makers)
    maker.join();
  CHECK(lost == 0);
  perfdb::ScratchDir::sweep(fs::temp_directory_path(), prefix);
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path()))
    CHECK(entry.path().filename().string().rfind(prefix, 0) != 0);
}
