// `liftx run` reports the arithmetic rate of what it runs: the flops of the program (of its
// --reference when given, the same for every variant) over the time.
#include <doctest/doctest.h>

#include "cli_helpers.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <string>

using namespace cli_test;

TEST_CASE("run prints the arithmetic rate after the bandwidth of a memory-bound stencil") {
  setenv("LIFTX_CACHE_DIR", (scratch_dir() / "cache").c_str(), 1);
  RunResult r = liftx("run stencils/variants/jacobi2d5pt/chunks4.lift --device cpu "
                      "--size M=24,N=40 --reference stencils/jacobi2d5pt.lift --repeat 2 "
                      "--no-roofline");
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  const size_t bandwidth = r.out.find("\nbandwidth ");
  const size_t arithmetic = r.out.find("\narithmetic ");
  REQUIRE(bandwidth != std::string::npos);
  REQUIRE(arithmetic != std::string::npos);
  CHECK(bandwidth < arithmetic); // no roofline, no ridge point: not called compute-bound
  CHECK(contains(r.out, "FLOP/s"));

  RunResult j = liftx("run stencils/variants/jacobi2d5pt/chunks4.lift --device cpu "
                      "--size M=24,N=40 --reference stencils/jacobi2d5pt.lift --repeat 2 "
                      "--no-roofline --format json");
  CAPTURE(j.err);
  REQUIRE(j.exit_code == 0);
  const nlohmann::json report = nlohmann::json::parse(j.out);
  CHECK(report.at("flops").get<double>() == 10.0 * 24 * 40); // jacobi5's 10 a point
  CHECK(report.at("gflop_per_s").get<double>() > 0);
  CHECK(report.contains("gb_per_s"));
}
