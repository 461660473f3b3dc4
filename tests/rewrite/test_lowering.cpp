// Lowering every stencil of stencils/ with the engine's rule sequences: the result is accepted by
// the code generator, computes what the high-level program computes, prints and parses back, and
// (where no fusion rule is needed) is exactly the hand-written variant of stencils/variants/.
#include "codegen/kernel.hpp"
#include "helpers.hpp"

namespace liftx::rewrite::test {
namespace {

const std::string kStencils = std::string(LIFTX_SOURCE_DIR) + "/stencils/";

ir::Program must_apply(const ir::Program& p, const Rule& rule,
                       const std::function<bool(const Site&)>& where = {}) {
  bool ok = false;
  ir::Program out = apply_first(p, rule, &ok, where);
  INFO("program: " << ir::print(p));
  REQUIRE_MESSAGE(ok, rule.name << " applies nowhere");
  return out;
}

ir::Program finish(const ir::Program& p) {
  return apply_until_fixpoint(apply_until_fixpoint(p, map_to_seq()), reduce_to_seq());
}

ir::Program global2d(const ir::Program& p) {
  return finish(must_apply(must_apply(p, map_to_glb(1)), map_to_glb(0)));
}

ir::Program global1d_rows(const ir::Program& p) {
  return finish(must_apply(must_apply(p, map_map_interchange()), map_to_glb(0)));
}

ir::Program chunks4(const ir::Program& p) {
  ir::Program glb = must_apply(must_apply(p, map_to_glb(1)), map_to_glb(0));
  auto inner = [](const Site& s) {
    const auto* c = s.expr.as<ir::Call>();
    const auto* m = c ? c->fun.as<ir::MapGlb>() : nullptr;
    return m && m->dim == 0;
  };
  return finish(must_apply(glb, chunk_outputs(4), inner));
}

ir::Program tiled_local(const ir::Program& p) {
  bool ok = false;
  ir::Program tiled = apply_first(p, tile_stencil_2d(16, 8), &ok);
  if (!ok)
    tiled = must_apply(p, tile_stencil_2d_zip(16, 8));
  ir::Program lowered = tiled;
  for (const Rule& r : {map_to_wrg(1), map_to_wrg(0), map_to_lcl(1), map_to_lcl(0)})
    lowered = must_apply(lowered, r);
  // Copy the slid tile (the one read with overlap), as the variants do.
  auto slid_tile = [](const Site& s) {
    const auto* c = s.expr.as<ir::Call>();
    const auto* m = c ? c->fun.as<ir::Map>() : nullptr;
    return m && m->f.as<ir::Slide>();
  };
  return finish(must_apply(lowered, copy_to_local(), slid_tile));
}

struct Strategy {
  const char* name;
  ir::Program (*lower)(const ir::Program&);
};
const Strategy kStrategies[] = {{"global2d", &global2d},
                                {"global1d_rows", &global1d_rows},
                                {"chunks4", &chunks4},
                                {"tiled_local", &tiled_local}};

} // namespace

TEST_CASE("lowering the stencils gives kernels computing the same function") {
  const Sizes sizes{{"M", 16}, {"N", 32}};
  for (const char* stencil : {"jacobi2d5pt", "jacobi2d9pt", "gradient", "gaussian", "stencil2d",
                              "hotspot2d", "srad1", "srad2"}) {
    ir::Module m = parse::parse_file(kStencils + stencil + ".lift");
    const ir::Program& high = m.main();
    // The weighted sums of gaussian and stencil2d keep reduce(add) . map(mult) unfused, so only
    // the other stencils lower to exactly the hand-written variants.
    bool fused_in_variant =
        std::string(stencil) == "gaussian" || std::string(stencil) == "stencil2d";
    for (const Strategy& strategy : kStrategies) {
      INFO(stencil << " / " << strategy.name);
      ir::Program low = strategy.lower(high);
      INFO("lowered: " << ir::print(low));
      CHECK_NOTHROW(codegen::generate(low));
      check_same_results(high, low, sizes);
      check_round_trip(m, low);
      if (!fused_in_variant) {
        ir::Module variant =
            parse::parse_file(kStencils + "variants/" + stencil + "/" + strategy.name + ".lift");
        INFO("variant: " << ir::print(variant.main()));
        CHECK(ir::alpha_equal(low, variant.main()));
      }
    }
  }
}

TEST_CASE("lowering: the high-level stencils are not accepted by codegen before lowering") {
  ir::Module m = parse::parse_file(kStencils + "jacobi2d5pt.lift");
  CHECK_THROWS_AS(codegen::generate(m.main()), UserError);
}

} // namespace liftx::rewrite::test
