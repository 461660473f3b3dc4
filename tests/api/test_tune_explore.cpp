// tune() and `liftx explore` run one pipeline (explore::Session): with the same model, sizes,
// strategy and budget they try the same variants in the same order and keep the fastest.
#include <liftx/liftx.hpp>

#include "../scoped_env.hpp"
#include "api_test_helpers.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace fs = std::filesystem;
using namespace liftx;
using namespace liftx_api_test;

namespace {

/// The index of the fastest of `medians` (each run's median time).
size_t fastest(const std::vector<double>& medians) {
  REQUIRE_FALSE(medians.empty());
  return size_t(std::min_element(medians.begin(), medians.end()) - medians.begin());
}

} // namespace

TEST_CASE("api: tune() and liftx explore try the same variants in order and keep the fastest") {
  TempDir dir("tune_explore");
  const std::string stencil = LIFTX_SOURCE_DIR "/stencils/jacobi2d5pt.lift";
  const int budget = 3;
  // The features take the device's memory bandwidth from its cached copy roofline, which the
  // first run measures: both sides see the one measured here, in a cache of this test's own.
  liftx_test::ScopedEnv cache("LIFTX_CACHE_DIR", (dir.path / "cache").c_str());
  REQUIRE(std::system(("'" + std::string(LIFTX_BINARY) + "' roofline --device cpu > '" +
                       (dir.path / "roofline.log").string() + "' 2>&1")
                          .c_str()) == 0);

  // The command line, with the static order (tune()'s strategy) and no untuned comparison run.
  const fs::path json = dir.path / "explore.json";
  const fs::path log = dir.path / "explore.log";
  const std::string command =
      std::string("'") + LIFTX_BINARY + "' explore '" + stencil +
      "' --device cpu --size 64 --strategy model --budget " + std::to_string(budget) +
      " --repeat 2 --warmup 1 --quiet --no-baseline --format json --db '" +
      (dir.path / "explore.db").string() + "' > '" + json.string() + "' 2> '" + log.string() + "'";
  const int status = std::system(command.c_str());
  INFO(read_text(log));
  REQUIRE(status == 0);
  const nlohmann::json explored = nlohmann::json::parse(read_text(json));
  const nlohmann::json& runs = explored.at("runs");
  REQUIRE(runs.size() == size_t(budget));

  // The library, without the default lowering (explore compares with it but does not rank it).
  ContextOptions context_options;
  context_options.tuning_db = (dir.path / "tuning.db").string();
  Context ctx("cpu", context_options);
  TuneOptions options;
  options.budget = budget;
  options.include_default = false;
  options.repeat = 2;
  options.warmup = 1;
  const TuneResult tuned = tune(ctx, load_program(stencil), {{"M", 64}, {"N", 64}}, options);
  REQUIRE(tuned.trials.size() == size_t(budget));
  CHECK(tuned.ranked == explored.at("space").at("variants").get<int64_t>());

  std::vector<double> explore_medians, tune_medians;
  for (size_t i = 0; i < runs.size(); ++i) {
    const nlohmann::json& run = runs[i];
    const Trial& trial = tuned.trials[i];
    CAPTURE(i);
    CHECK(trial.rank == run.at("rank").get<int>());
    CHECK(trial.variant ==
          run.at("parameters").get<std::string>() + " | " + run.at("launch").get<std::string>());
    CHECK(trial.predicted == doctest::Approx(run.at("predicted").get<double>()));
    REQUIRE(run.at("status") == "ok");
    REQUIRE(trial.median_ms);
    explore_medians.push_back(run.at("median_ms").get<double>());
    tune_medians.push_back(*trial.median_ms);
  }
  // Each keeps its fastest run (the timings themselves differ from run to run).
  CHECK(explored.at("best").get<size_t>() == fastest(explore_medians) + 1);
  CHECK(tuned.variant == tuned.trials[fastest(tune_medians)].variant);
}
