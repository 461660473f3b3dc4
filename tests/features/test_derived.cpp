// Derived columns (features/derived.hpp): the round trip through the database's column values,
// hand-checked values, and what makes them worth having: they stay put when only the size changes.
#include "helpers.hpp"

#include "features/derived.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using namespace liftx;
using namespace liftx::features;

namespace {

double column(const std::vector<double>& values, const std::string& name) {
  const auto& columns = derived_columns();
  for (size_t i = 0; i < columns.size(); ++i)
    if (columns[i].name == name)
      return values.at(i);
  FAIL("no derived column " << name);
  return 0;
}

/// A made-up launch: 1024 work-items moving 8 KiB, each with 2 loads and 1 store.
Features streaming_launch() {
  Features f;
  f.global_size = {1024, 1, 1};
  f.local_size = {128, 1, 1};
  f.work_items = 1024;
  f.work_groups = 8;
  f.global_loads_per_thread = 2;
  f.global_stores_per_thread = 1;
  f.cache_lines_per_warp_access = 1;
  f.bytes_moved = 8192;
  f.working_set_bytes = 8192;
  f.arith_ops_per_thread = 4;
  f.work_groups_per_cu = 16;
  f.occupancy = 1;
  return f;
}

} // namespace

TEST_CASE("derived columns: one value per column, names distinct from the Table-1 columns") {
  const std::vector<double> v =
      derived_values(streaming_launch(), runtime::named_profile("nvidia").throughput());
  REQUIRE(v.size() == derived_columns().size());
  for (const DerivedColumn& d : derived_columns())
    for (const Column& c : columns())
      CHECK(d.name != c.name);
  for (double x : v)
    CHECK(std::isfinite(x));
}

TEST_CASE("derived columns by hand: traffic, intensity and the roofline terms") {
  target::DeviceProfile::Throughput t;
  t.memory_gbs = 1000;
  t.cache_gbs = 2000;
  t.local_gbs = 10000;
  t.gops = 4000;
  t.compute_units = 4;
  t.resident_work_items_per_cu = 2048;
  t.warp_width = 32;
  t.cache_line_bytes = 128;
  Features f = streaming_launch();
  std::vector<double> v = derived_values(f, t);
  // 1024 x 3 accesses / 32 lanes = 96 warp accesses of one 128-byte line: 12288 bytes / 8192.
  CHECK(column(v, "line_bytes_per_byte") == doctest::Approx(1.5));
  CHECK(column(v, "useful_bytes_per_byte") == doctest::Approx(1.5)); // 3072 x 4 bytes
  CHECK(column(v, "coalescing_efficiency") == doctest::Approx(1.0));
  CHECK(column(v, "ops_per_byte") == doctest::Approx(0.5));
  CHECK(column(v, "work_items_per_byte") == doctest::Approx(0.125));
  CHECK(column(v, "cu_fill") == doctest::Approx(1.0));
  CHECK(column(v, "waves") == doctest::Approx(8.0 / 64));
  CHECK(column(v, "wave_efficiency") == doctest::Approx(0.125));
  // Cache time = 12288 B / 2000 GB/s over the ideal 8192 B / 1000 GB/s.
  CHECK(column(v, "cache_time") == doctest::Approx(0.75));
  CHECK(column(v, "compute_time") == doctest::Approx(4096.0 / 4000 / (8192.0 / 1000)));
  CHECK(column(v, "local_time") == 0);
  // A transposed mapping: every lane its own line.
  f.cache_lines_per_warp_access = 32;
  v = derived_values(f, t);
  CHECK(column(v, "line_bytes_per_byte") == doctest::Approx(48));
  CHECK(column(v, "coalescing_efficiency") == doctest::Approx(1.0 / 32));
  CHECK(column(v, "cache_time") == doctest::Approx(24));
  CHECK(column(v, "roofline_time") >= column(v, "cache_time"));
}

TEST_CASE("the features come back from the column values the database stores") {
  Features f = streaming_launch();
  f.local_size_assumed = true;
  f.local_memory_bytes = 4096;
  f.private_loads_per_thread = 3.5;
  f.global_access_width = 4;
  f.bank_conflict_degree = 2;
  f.if_bodies_per_thread = 0.25;
  f.barriers_per_thread = 2;
  const Features back = features_from_columns(to_json(f));
  CHECK(to_json(back) == to_json(f));
  nlohmann::json missing = to_json(f);
  missing.erase("work_items");
  CHECK_THROWS_WITH_AS(features_from_columns(missing), doctest::Contains("'work_items'"),
                       UserError);
  // Databases from before vector accesses: scalar.
  nlohmann::json old = to_json(f);
  old.erase("global_access_width");
  CHECK(features_from_columns(old).global_access_width == 1);
}

TEST_CASE("size-free columns stay put when only the size changes (tied launch)") {
  // One output per work-item: the per-byte ratios are those of one point, at any size.
  const ir::Program program =
      test::parse_program(test::read_source("stencils/variants/jacobi2d5pt/global2d.lift"));
  const target::DeviceProfile nvidia = runtime::named_profile("nvidia");
  codegen::LaunchRequest request;
  std::vector<std::vector<double>> at;
  for (int64_t n : {512, 2048}) {
    const Features f = compute(program, {{"M", n}, {"N", n}}, request, nvidia);
    at.push_back(derived_values(f, nvidia.throughput()));
  }
  for (const char* name :
       {"line_bytes_per_byte", "useful_bytes_per_byte", "ops_per_byte", "work_items_per_byte",
        "work_groups_per_byte", "cache_time", "compute_time", "coalescing_efficiency"}) {
    CAPTURE(name);
    CHECK(column(at[1], name) == doctest::Approx(column(at[0], name)).epsilon(0.02));
  }
  // The number of waves, in contrast, grows with the work.
  CHECK(column(at[1], "waves") > 10 * column(at[0], "waves"));
}
