// Per rule: "applies" rows (expected program, round trip, interpreter before == after) and
// "refuses" rows (the NoMatch reason).
#include "helpers.hpp"

namespace liftx::rewrite::test {
namespace {

void run_table(const Rule& rule, const std::vector<AppliesRow>& applies,
               const std::vector<RefusesRow>& refuses) {
  CHECK(!rule.name.empty());
  CHECK(!rule.doc.empty());
  CHECK(!rule.labels.empty());
  for (const AppliesRow& row : applies)
    check_applies(rule, row);
  for (const RefusesRow& row : refuses)
    check_refuses(rule, row);
}

const Sizes n8{{"N", 8}};
const Sizes mn{{"M", 3}, {"N", 8}};

} // namespace

TEST_CASE("split-join") {
  run_table(split_join(4),
            {{"def f(x: [float]N) = map(neg, x)", "#0",
              "def f(x: [float]N) = join(map(map(neg), split(4, x)))", n8},
             {"def f(x: [[float]N]M) = map(map(neg), x)", "map(neg, p)",
              "def f(x: [[float]N]M) = map(r => join(map(map(neg), split(4, r))), x)", mn}},
            {{"def f(x: [float]6) = map(neg, x)", "#0", "4 does not divide the length 6"},
             {"def f(x: [float]N) = mapSeq(neg, x)", "#0", "not a call of map"}});
  CHECK(split_join(4).name == "split-join(4)");
  CHECK_THROWS_AS(split_join(0), UserError);
}

TEST_CASE("map-fusion") {
  run_table(map_fusion(),
            {{"def f(x: [float]N) = map(neg, map(sq, x))", "#0",
              "def f(x: [float]N) = map(y => neg(sq(y)), x)", n8},
             {"def f(x: [float]N) = mapSeq(neg, mapSeq(sq, x))", "#0",
              "def f(x: [float]N) = mapSeq(y => neg(sq(y)), x)", n8},
             {"def f(x: [[float]N]M) = map(reduce(add, 0.0f), map(map(sq), x))", "#0",
              "def f(x: [[float]N]M) = map(r => reduce(add, 0.0f, map(sq, r)), x)", mn}},
            {{"def f(x: [float]N) = map(neg, mapSeq(sq, x))", "#0", "not a map of the same kind"},
             {"def f(x: [float]N) = map(neg, x)", "#0", "not a map of the same kind"},
             {"def f(x: [float]N) = reduce(add, 0.0f, x)", "#0", "not a call of map"}});
}

TEST_CASE("map-fission") {
  run_table(map_fission(),
            {{"def f(x: [float]N) = map(y => neg(sq(y)), x)", "#0",
              "def f(x: [float]N) = map(neg, map(sq, x))", n8},
             {"def f(x: [[float]N]M) = map(r => reduce(add, 0.0f, map(sq, r)), x)", "#0",
              "def f(x: [[float]N]M) = map(reduce(add, 0.0f), map(map(sq), x))", mn},
             {"def f(x: [float]N) = mapSeq(y => neg(sq(y)), x)", "#0",
              "def f(x: [float]N) = mapSeq(neg, mapSeq(sq, x))", n8}},
            {{"def f(x: [float]N) = map(y => add(y, y), x)", "#0", "not a call of one argument"},
             {"def f(x: [float]N) = map(neg, x)", "#0", "not a lambda"},
             {"def f(x: [[float]N]M) = map(r => r[0], x)", "#0", "not a lambda"},
             {"def f(x: [[float]N]M) = map(r => map(y => add(y, r[0]), r), x)", "#0",
              "uses the lambda's parameter"},
             {"def f(x: [float]N, z: [float]N) = map(y => neg(z[0]), x)", "#0",
              "does not use the lambda's parameter"}});
}

TEST_CASE("zip-of-maps") {
  run_table(
      zip_of_maps(),
      {{"def f(x: [float]N, z: [float]N) = zip(map(neg, x), map(sq, z))", "#0",
        "def f(x: [float]N, z: [float]N) = "
        "map(p => tuple(neg(get(0, p)), sq(get(1, p))), zip(x, z))",
        n8},
       {"def f(x: [[float]N]M, z: [[float]N]M) = "
        "zip2D(map2D(neg, x), map2D(sq, z), map2D(sq, x))",
        "#0",
        "def f(x: [[float]N]M, z: [[float]N]M) = map(map(p => tuple(neg(get(0, p)), "
        "sq(get(1, p)), sq(get(0, p)))), map(zip, zip(x, z)))",
        mn},
       {"def f(x: [[float]N]M) = zip2D(map2D(neg, x), map2D(sq, x), map2D(neg, x))", "#0",
        "def f(x: [[float]N]M) = map(map(p => tuple(neg(p), sq(p), neg(p))), x)", mn},
       {"def f(x: [[[float]N]M]L, z: [[[float]N]M]L) = zip3D(map3D(neg, x), map3D(sq, z))",
        "#0",
        "def f(x: [[[float]N]M]L, z: [[[float]N]M]L) = map(map(map(p => "
        "tuple(neg(get(0, p)), sq(get(1, p))))), map(map(zip), map(zip, zip(x, z))))",
        {{"L", 2}, {"M", 3}, {"N", 4}}}},
      {{"def f(x: [float]N, z: [float]N) = zip(map(neg, x), z)", "#0", "not a 1D map"},
       {"def f(x: [[float]N]M) = zip2D(map2D(neg, x), x)", "#0", "not a 2D map"},
       {"def f(x: [[[float]N]M]L, z: [[[float]N]M]L) = zip(map(transpose, x), map(transpose, z))",
        "#0", "only rearranges data"},
       {"def f(x: [float]N) = map(neg, x)", "#0", "not a zip"}});
}

TEST_CASE("map-map-interchange") {
  run_table(map_map_interchange(),
            {{"def f(x: [[float]N]M) = map(map(neg), x)", "#0",
              "def f(x: [[float]N]M) = transpose(map(map(neg), transpose(x)))", mn},
             {"def f(a: [[float]N]M, b: [[float]N]M) = map(map(add), map(zip, zip(a, b)))", "#0",
              "def f(a: [[float]N]M, b: [[float]N]M) = "
              "transpose(map(map(add), transpose(map(zip, zip(a, b)))))",
              mn}},
            {{"def f(x: [float]N) = map(neg, x)", "#0", "not a map"},
             {"def f(x: [[float]N]M) = map(reduce(add, 0.0f), x)", "#0", "not a map"}});
}

TEST_CASE("moving-join") {
  run_table(moving_join(),
            {{"def f(x: [[float]N]M) = map(neg, join(x))", "#0",
              "def f(x: [[float]N]M) = join(map(map(neg), x))", mn}},
            {{"def f(x: [float]N) = map(neg, x)", "#0", "not a join"},
             {"def f(x: [[float]N]M) = join(x)", "#0", "not a call of map"}});
}

TEST_CASE("slide-tiling") {
  run_table(slide_tiling(4),
            {{"def f(x: [float]N) = map(reduce(add, 0.0f), slide(3, 1, x))",
              "slide(3, 1, x)",
              "def f(x: [float]N) = map(reduce(add, 0.0f), join(map(slide(3, 1), slide(6, 4, x))))",
              {{"N", 10}}},
             {"def f(x: [float]N) = map(reduce(add, 0.0f), slide(3, 2, x))",
              "slide(3, 2, x)",
              "def f(x: [float]N) = map(reduce(add, 0.0f), join(map(slide(3, 2), slide(5, 4, x))))",
              {{"N", 9}}}},
            {{"def f(x: [float]N) = map(reduce(add, 0.0f), slide(3, 3, x))", "slide(3, 3, x)",
              "step 3 does not divide the tile size 4"},
             {"def f(x: [float]N) = map(neg, x)", "#0", "not a call of slide"}});
}

TEST_CASE("tile-stencil-1d") {
  run_table(
      tile_stencil_1d(4),
      {{"def f(x: [float]N) = map(reduce(add, 0.0f), slide(3, 1, x))",
        "#0",
        "def f(x: [float]N) = join(map(t => map(reduce(add, 0.0f), slide(3, 1, t)), "
        "slide(6, 4, x)))",
        {{"N", 10}}},
       {"def f(x: [float]N) = map(reduce(add, 0.0f), slide(3, 1, pad(1, 1, clamp, x)))", "#0",
        "def f(x: [float]N) = join(map(t => map(reduce(add, 0.0f), slide(3, 1, t)), "
        "slide(6, 4, pad(1, 1, clamp, x))))",
        n8}},
      {{"def f(x: [float]N) = map(neg, x)", "#0", "not a slide"},
       {"def f(x: [float]N) = map(reduce(add, 0.0f), slide(3, 3, x))", "#0", "does not divide"},
       {"def f(x: [float]N) = mapSeq(reduce(add, 0.0f), slide(3, 1, x))", "#0",
        "not a call of map"}});
}

namespace {
const char* const kStencil2d =
    "def f(x: [[float]N]M) = map2D(nbh => add(nbh[0][1], nbh[1][2]), slide2D(3, 1, pad2D(1, 1, "
    "clamp, x)))";
const char* const kZipStencil2d =
    "def f(a: [[float]N]M, b: [[float]N]M) = map2D((nbh, p) => add(nbh[1][1], p), "
    "zip2D(slide2D(3, 1, pad2D(1, 1, clamp, a)), b))";
} // namespace

TEST_CASE("tile-stencil-2d") {
  const Sizes sizes{{"M", 4}, {"N", 8}};
  run_table(
      tile_stencil_2d(4, 2),
      {{kStencil2d, "#0",
        "def f(x: [[float]N]M) = map(join, join(map(transpose, map(map(t => map2D(nbh => "
        "add(nbh[0][1], nbh[1][2]), slide2D(3, 1, t))), map(transpose, slide(4, 2, map(slide(6, "
        "4), pad2D(1, 1, clamp, x))))))))",
        sizes},
       {"def f(x: [[float]N]M) = map2D(nbh => add(nbh[0][0], nbh[2][2]), slide2D(3, 2, x))",
        "#0",
        "def f(x: [[float]N]M) = map(join, join(map(transpose, map(map(t => map2D(nbh => "
        "add(nbh[0][0], nbh[2][2]), slide2D(3, 2, t))), map(transpose, slide(3, 2, map(slide(5, "
        "4), x)))))))",
        {{"M", 5}, {"N", 9}}}},
      {{"def f(x: [[float]N]M) = map2D(neg, x)", "#0", "not a slide2D"},
       {"def f(x: [[float]N]M) = map2D(nbh => nbh[0][0], slide2D(3, 3, x))", "#0",
        "does not divide the tile width 4"},
       {kZipStencil2d, "#0", "not a slide2D"},
       {"def f(x: [float]N) = map(neg, x)", "#0", "not a map"}});
  CHECK(tile_stencil_2d(16, 8).name == "tile-stencil-2d(16,8)");
}

TEST_CASE("tile-stencil-2d-zip") {
  const Sizes sizes{{"M", 4}, {"N", 8}};
  run_table(
      tile_stencil_2d_zip(4, 2),
      {{kZipStencil2d, "#0",
        "def f(a: [[float]N]M, b: [[float]N]M) = map(join, join(map(transpose, map(map((t, q) => "
        "map2D((nbh, p) => add(nbh[1][1], p), zip2D(slide2D(3, 1, t), q))), zip2D(map(transpose, "
        "slide(4, 2, map(slide(6, 4), pad2D(1, 1, clamp, a)))), map(transpose, slide(2, 2, "
        "map(slide(4, 4), b))))))))",
        sizes},
       // The slid grid need not come first.
       {"def f(a: [[float]N]M, b: [[float]N]M) = map2D((p, nbh) => add(nbh[1][1], p), zip2D(b, "
        "slide2D(3, 1, pad2D(1, 1, clamp, a))))",
        "#0",
        "def f(a: [[float]N]M, b: [[float]N]M) = map(join, join(map(transpose, map(map((q, t) => "
        "map2D((p, nbh) => add(nbh[1][1], p), zip2D(q, slide2D(3, 1, t)))), "
        "zip2D(map(transpose, slide(2, 2, map(slide(4, 4), b))), map(transpose, slide(4, 2, "
        "map(slide(6, 4), pad2D(1, 1, clamp, a)))))))))",
        sizes},
       // Several slid grids (of different window sizes): overlapped tiles for each.
       {"def f(a: [[float]N]M, b: [[float]N]M) = map2D((u, v) => add(u[1][1], v[0][0]), "
        "zip2D(slide2D(3, 1, pad2D(1, 1, clamp, a)), slide2D(1, 1, b)))",
        "#0",
        "def f(a: [[float]N]M, b: [[float]N]M) = map(join, join(map(transpose, map(map((t, t1) => "
        "map2D((u, v) => add(u[1][1], v[0][0]), zip2D(slide2D(3, 1, t), slide2D(1, 1, t1)))), "
        "zip2D(map(transpose, slide(4, 2, map(slide(6, 4), pad2D(1, 1, clamp, a)))), "
        "map(transpose, slide(2, 2, map(slide(4, 4), b))))))))",
        sizes}},
      {{kStencil2d, "#0", "not a zip2D"},
       {"def f(a: [[float]N]M, b: [[float]N]M) = map2D(add, zip2D(a, b))", "#0",
        "no zipped grid is a slide2D"}});
}

namespace {
const char* const kStencil3d = "def f(x: [[[float]O]N]M) = map3D(nbh => add(nbh[0][1][1], "
                               "nbh[1][1][2]), slide3D(3, 1, pad3D(1, 1, clamp, x)))";
const char* const kZipStencil3d =
    "def f(a: [[[float]O]N]M, b: [[[float]O]N]M) = map3D((nbh, p) => add(nbh[1][2][1], p), "
    "zip3D(slide3D(3, 1, pad3D(1, 1, clamp, a)), b))";
const Sizes kCube{{"M", 4}, {"N", 6}, {"O", 8}};
} // namespace

TEST_CASE("tile-stencil-3d") {
  run_table(
      tile_stencil_3d(4, 2, 2),
      {{kStencil3d, "#0",
        "def f(x: [[[float]O]N]M) = map(map(join), map(join, map(map(transpose), join(map("
        "transpose, map(map(transpose), map3D(t => map3D(nbh => add(nbh[0][1][1], nbh[1][1][2]), "
        "slide3D(3, 1, t)), slide3D(4, 2, 4, 2, 6, 4, pad3D(1, 1, clamp, x)))))))))",
        kCube},
       // Zipped grids: overlapped tiles of the slid one, plain tiles of the point-wise one.
       {kZipStencil3d, "#0",
        "def f(a: [[[float]O]N]M, b: [[[float]O]N]M) = map(map(join), map(join, "
        "map(map(transpose), join(map(transpose, map(map(transpose), map3D((t, q) => "
        "map3D((nbh, p) => add(nbh[1][2][1], p), zip3D(slide3D(3, 1, t), q)), "
        "zip3D(slide3D(4, 2, 4, 2, 6, 4, pad3D(1, 1, clamp, a)), "
        "slide3D(2, 2, 2, 2, 4, 4, b)))))))))",
        kCube}},
      {{kStencil2d, "#0", "not a call of map3D"},
       {"def f(x: [[[float]O]N]M) = map3D(neg, x)", "#0", "the argument is not a slide3D"},
       {"def f(a: [[[float]O]N]M, b: [[[float]O]N]M) = map3D(add, zip3D(a, b))", "#0",
        "no zipped grid is a slide3D"}});
  CHECK_THROWS_AS(tile_stencil_3d(4, 0, 2), UserError);
}

TEST_CASE("slide-window-3d") {
  run_table(
      slide_window_3d(),
      {{kStencil3d, "#0",
        "def f(x: [[[float]O]N]M) = mapSeqSlide(planes => map2D(nbh => add(nbh[0][1][1], "
        "nbh[1][1][2]), map(transpose, transpose(map(p => slide2D(3, 1, p), planes)))), 3, 1, "
        "pad3D(1, 1, clamp, x))",
        kCube},
       {kZipStencil3d, "#0",
        "def f(a: [[[float]O]N]M, b: [[[float]O]N]M) = mapSeqSlide(w => map2D((nbh, p) => "
        "add(nbh[1][2][1], p), zip2D(map(transpose, transpose(map(p => slide2D(3, 1, p), "
        "map(get(0), w)))), get(1, w[2]))), 3, 1, zip(pad3D(1, 1, clamp, a), pad(2, 0, clamp, "
        "b)))",
        kCube}},
      {{kStencil2d, "#0", "not a call of map3D"},
       {"def f(x: [[[float]O]N]M) = map3D(neg, x)", "#0", "the argument is not a slide3D"},
       {"def f(a: [[[float]O]N]M, b: [[[float]O]N]M) = map3D(add, zip3D(a, b))", "#0",
        "no zipped grid is a slide3D"}});
}

TEST_CASE("transpose-transpose-id") {
  run_table(
      transpose_transpose_id(),
      {{"def f(x: [[float]N]M) = map2D(neg, transpose(transpose(x)))", "transpose(transpose(x))",
        "def f(x: [[float]N]M) = map2D(neg, x)", mn}},
      {{"def f(x: [[float]N]M) = map2D(neg, transpose(x))", "transpose(x)", "not a transpose"},
       {"def f(x: [[float]N]M) = map2D(neg, x)", "#0", "not a call of transpose"}});
}

TEST_CASE("join-split-id") {
  run_table(join_split_id(),
            {{"def f(x: [float]N) = map(neg, join(split(4, x)))", "join(split(4, x))",
              "def f(x: [float]N) = map(neg, x)", n8}},
            {{"def f(x: [[float]N]M) = map(neg, join(x))", "join(x)", "not a split"},
             {"def f(x: [float]N) = map(neg, x)", "#0", "not a call of join"}});
}

TEST_CASE("split-join-id") {
  run_table(split_join_id(),
            {{"def f(x: [[float]4]M) = map2D(neg, split(4, join(x)))",
              "split(4, join(x))",
              "def f(x: [[float]4]M) = map2D(neg, x)",
              {{"M", 3}}}},
            {{"def f(x: [[float]N]M) = map2D(neg, split(4, join(x)))", "split(4, join(x))",
              "the rows have length N, the split size is 4"},
             {"def f(x: [float]N) = map2D(neg, split(4, x))", "split(4, x)", "not a join"}});
}

TEST_CASE("map-to-mapGlb") {
  run_table(
      map_to_glb(0),
      {{"def f(x: [float]N) = map(neg, x)", "#0", "def f(x: [float]N) = mapGlb0(neg, x)", n8},
       {"def f(x: [[float]N]M) = mapGlb1(map(neg), x)", "map(neg, p)",
        "def f(x: [[float]N]M) = mapGlb1(mapGlb0(neg), x)", mn}},
      {{"def f(x: [[float]N]M) = map(pad(1, 1, clamp), x)", "#0", "does not compute"},
       {"def f(x: [[float]N]M) = mapGlb0(map(neg), x)", "map(neg, p)", "already inside a mapGlb0"},
       {"def f(x: [[float]N]M) = map(mapGlb0(neg), x)", "#0", "contains a mapGlb0"},
       {"def f(x: [[float]N]M) = mapWrg1(map(neg), x)", "map(neg, p)", "inside a work-group map"},
       {"def f(x: [float]N) = mapSeq(neg, x)", "#0", "not a call of map"}});
  CHECK(map_to_glb(1).name == "map-to-mapGlb1");
  CHECK_THROWS_AS(map_to_glb(3), UserError);
}

TEST_CASE("map-to-mapWrg") {
  run_table(
      map_to_wrg(1),
      {{"def f(x: [[float]N]M) = map(map(neg), x)", "#0",
        "def f(x: [[float]N]M) = mapWrg1(map(neg), x)", mn}},
      {{"def f(x: [[float]N]M) = mapGlb0(map(neg), x)", "map(neg, p)",
        "inside a global or local map"},
       {"def f(x: [[float]N]M) = mapWrg1(map(neg), x)", "map(neg, p)", "already inside a mapWrg1"},
       {"def f(x: [[float]N]M) = map(mapWrg1(neg), x)", "#0", "contains a mapWrg1"},
       {"def f(x: [[float]N]M) = map(pad(1, 1, clamp), x)", "#0", "does not compute"}});
}

TEST_CASE("map-to-mapLcl") {
  run_table(
      map_to_lcl(0),
      {{"def f(x: [[float]N]M) = mapWrg0(map(neg), x)", "map(neg, p)",
        "def f(x: [[float]N]M) = mapWrg0(mapLcl0(neg), x)", mn}},
      {{"def f(x: [float]N) = map(neg, x)", "#0", "not inside a mapWrg0"},
       {"def f(x: [[float]N]M) = mapWrg1(map(neg), x)", "map(neg, p)", "not inside a mapWrg0"},
       {"def f(x: [[[float]N]M]M) = mapWrg0(mapLcl0(map(neg)), x)", "map(neg, p)",
        "already inside a mapLcl0"}});
}

TEST_CASE("map-to-mapSeq") {
  run_table(
      map_to_seq(),
      {{"def f(x: [float]N) = map(neg, x)", "#0", "def f(x: [float]N) = mapSeq(neg, x)", n8},
       {"def f(x: [[float]N]M) = map(map(neg), x)", "#0",
        "def f(x: [[float]N]M) = mapSeq(map(neg), x)", mn}},
      {{"def f(x: [[float]N]M) = map2D(neg, map(pad(1, 1, clamp), x))", "#3", "does not compute"},
       {"def f(x: [float]N) = mapSeq(neg, x)", "#0", "not a call of map"}});
}

TEST_CASE("reduce-to-reduceSeq") {
  run_table(reduce_to_seq(),
            {{"def f(x: [float]N) = reduce(add, 0.0f, x)", "#0",
              "def f(x: [float]N) = reduceSeq(add, 0.0f, x)", n8},
             {"def f(x: [[float]N]M) = map(reduce(add, 0.0f), x)", "reduce(add, 0.0f, p)",
              "def f(x: [[float]N]M) = map(reduceSeq(add, 0.0f), x)", mn}},
            {{"def f(x: [float]N) = map(neg, x)", "#0", "not a call of reduce"}});
}

TEST_CASE("chunk-outputs") {
  run_table(
      chunk_outputs(4),
      {{"def f(x: [float]N) = mapGlb0(neg, x)", "#0",
        "def f(x: [float]N) = join(mapGlb0(mapSeq(neg), split(4, x)))", n8},
       {"def f(x: [[float]N]M) = mapGlb1(mapGlb0(neg), x)", "mapGlb0(neg, p)",
        "def f(x: [[float]N]M) = mapGlb1(r => join(mapGlb0(mapSeq(neg), split(4, r))), x)", mn}},
      {{"def f(x: [float]6) = mapGlb0(neg, x)", "#0", "4 does not divide the length 6"},
       {"def f(x: [float]N) = map(neg, x)", "#0", "not a call of mapGlb"}});
}

TEST_CASE("copy-to-local") {
  run_table(
      copy_to_local(),
      {{"def f(x: [float]N) = mapWrg0(t => mapLcl0(neg, t), split(4, x))", "mapLcl0(neg, p)",
        "def f(x: [float]N) = mapWrg0(t => mapLcl0(neg, toLocal(mapLcl0(id))(t)), split(4, x))",
        n8},
       {"def f(x: [[float]N]M) = mapWrg0(t => mapLcl1(mapLcl0(neg), t), split(1, x))",
        "mapLcl1(mapLcl0(neg), p)",
        "def f(x: [[float]N]M) = mapWrg0(t => mapLcl1(mapLcl0(neg), "
        "toLocal(mapLcl1(mapLcl0(id)))(t)), split(1, x))",
        mn}},
      {{"def f(x: [float]N) = map(neg, x)", "#0", "not directly inside a mapWrg"},
       {"def f(x: [[float]N]M) = mapWrg0(mapLcl0(neg), x)", "neg(p)",
        "not directly inside a mapWrg"},
       {"def f(x: [float]N) = mapWrg0(t => mapLcl0(neg, toLocal(mapLcl0(id))(t)), split(4, x))",
        "#1", "no argument is an array parameter"},
       {"def f(x: [float]N) = mapWrg0(t => mapLcl0(neg, toLocal(mapLcl0(id))(t)), split(4, x))",
        "#3", "already a copy"}});
}

TEST_CASE("pad-local-rows") {
  const std::string tile2d = "def f(x: [[float]N]M) = mapWrg0(t => mapLcl1(mapLcl0(neg), "
                             "toLocal(mapLcl1(mapLcl0(id)))(t)), split(1, x))";
  run_table(
      pad_local_rows(3),
      {{tile2d, "toLocal(mapLcl1(mapLcl0(id)), t)",
        "def f(x: [[float]N]M) = mapWrg0(t => mapLcl1(mapLcl0(neg), "
        "toLocalPadded(3, mapLcl1(mapLcl0(id)), t)), split(1, x))",
        mn}},
      {{"def f(x: [float]N) = mapWrg0(t => mapLcl0(neg, toLocal(mapLcl0(id))(t)), split(4, x))",
        "toLocal(mapLcl0(id), t)", "fewer than two dimensions"},
       {"def f(x: [[float]8]N) = mapWrg0(t => mapLcl1(mapLcl0(vectorize(4, neg)), "
        "toLocal(mapLcl1(mapLcl0(id)))(t)), split(2, map(asVector(4), x)))",
        "toLocal(mapLcl1(mapLcl0(id)), t)", "elements are not scalars"},
       {tile2d, "#1", "not a call of toLocal"}});
  CHECK(pad_local_rows(1).name == "pad-local-rows(1)");
  CHECK_THROWS_AS(pad_local_rows(0), UserError);
}

TEST_CASE("copy-to-private") {
  run_table(
      copy_to_private(),
      {{"def f(x: [float]N) = mapGlb0(w => add(w[0], w[2]), slide(3, 1, x))", "w[0]",
        "def f(x: [float]N) = mapGlb0(w => add(toPrivate(mapSeq(id))(w)[0], w[2]), slide(3, 1, "
        "x))",
        n8},
       {"def f(x: [[float]N]M) = mapGlb1(mapGlb0(w => w[1][1]), slide2D(3, 1, x))",
        "w[1]",
        "def f(x: [[float]N]M) = mapGlb1(mapGlb0(w => toPrivate(mapSeq(mapSeq(id)))(w)[1][1]), "
        "slide2D(3, 1, x))",
        {{"M", 4}, {"N", 5}}}},
      {{"def f(x: [float]N) = map(w => add(w[0], w[2]), slide(3, 1, x))", "w[0]",
        "not inside a mapGlb or mapLcl"},
       {"def f(x: [float]N) = mapGlb0(w => add(w[0], w[1]), slide(65, 1, x))", "w[0]",
        "no argument is an array parameter of constant size"},
       {"def f(x: [float]N) = mapGlb0(w => add(w[0], w[2]), slide(3, 1, x))", "add(w[0], w[2])",
        "no argument is an array parameter"}});
}

TEST_CASE("all_rules: unique names, docs and labels") {
  std::vector<Rule> rules = all_rules();
  CHECK(rules.size() >= 20);
  std::set<std::string> names;
  for (const Rule& r : rules) {
    CAPTURE(r.name);
    CHECK(names.insert(r.name).second);
    CHECK(r.doc.find("=>") != std::string::npos);
    CHECK(!r.labels.empty());
    CHECK(r.apply);
  }
}

} // namespace liftx::rewrite::test

namespace liftx::rewrite::test {

TEST_CASE("slide-window-1d") {
  run_table(slide_window_1d(),
            {{"def f(x: [float]N) = map(reduce(add, 0.0f), slide(3, 1, x))",
              "#0",
              "def f(x: [float]N) = mapSeqSlide(reduce(add, 0.0f), 3, 1, x)",
              {{"N", 10}}},
             {"def f(x: [float]N) = mapSeq(reduce(add, 0.0f), slide(3, 2, pad(1, 0, clamp, x)))",
              "#0",
              "def f(x: [float]N) = mapSeqSlide(reduce(add, 0.0f), 3, 2, pad(1, 0, clamp, x))",
              {{"N", 8}}}},
            {{"def f(x: [float]N) = map(neg, x)", "#0", "not a slide"},
             {"def f(x: [[float]N]M) = map(transpose, slide(2, 1, x))", "#0", "does not compute"},
             {"def f(x: [float]N) = reduce(add, 0.0f, x)", "#0", "not a call of map"}});
}

TEST_CASE("slide-window-2d") {
  run_table(slide_window_2d(),
            {{kStencil2d,
              "#0",
              "def f(x: [[float]N]M) = mapSeqSlide(rows => map(nbh => add(nbh[0][1], nbh[1][2]), "
              "transpose(map(slide(3, 1), rows))), 3, 1, pad2D(1, 1, clamp, x))",
              {{"M", 5}, {"N", 7}}}},
            {{"def f(x: [[float]N]M) = map(map(neg), x)", "#0", "not a slide2D"},
             {kZipStencil2d, "#0", "not a slide2D"},
             {"def f(x: [float]N) = map(neg, x)", "#0", "the mapped function is not a map"}});
}

TEST_CASE("slide-window-2d-zip") {
  run_table(slide_window_2d_zip(),
            {{kZipStencil2d,
              "#0",
              "def f(a: [[float]N]M, b: [[float]N]M) = mapSeqSlide(w => map((nbh, p) => "
              "add(nbh[1][1], p), zip(transpose(map(slide(3, 1), map(get(0), w))), get(1, w[2]))), "
              "3, 1, zip(pad2D(1, 1, clamp, a), pad(2, 0, clamp, b)))",
              {{"M", 5}, {"N", 7}}}},
            {{kStencil2d, "#0", "not a zip2D"},
             {"def f(a: [[float]N]M, b: [[float]N]M) = map2D(add, zip2D(a, b))", "#0",
              "no zipped grid is a slide2D"},
             {"def f(a: [[float]N]M, b: [[float]N]M) = map(neg, join(a))", "#0",
              "the mapped function is not a map"}});
}

TEST_CASE("vectorise-outputs") {
  run_table(
      vectorise_outputs(4),
      {{"def f(x: [[float]4]N) = mapGlb0(mapSeq(neg), x)", "mapSeq(neg, p)",
        "def f(x: [[float]4]N) = mapGlb0(r => asScalar(mapSeq(id, asVector(4, "
        "toPrivate(mapSeq(neg))(r)))), x)",
        n8},
       {"def f(x: [[float]8]N) = mapGlb0(mapSeq(sq), x)",
        "mapSeq(sq, p)",
        "def f(x: [[float]8]N) = mapGlb0(r => asScalar(mapSeq(id, asVector(4, "
        "toPrivate(mapSeq(sq))(r)))), x)",
        {{"N", 3}}}},
      {{"def f(x: [[float]4]N) = mapGlb0(mapSeq(id), x)", "mapSeq(id, p)", "a copy"},
       {"def f(x: [[float]6]N) = mapGlb0(mapSeq(neg), x)", "mapSeq(neg, p)", "4 does not divide"},
       {"def f(x: [float]N) = mapSeq(neg, x)", "#0", "not a constant"},
       {"def f(x: [float]N) = map(neg, x)", "#0", "not a call of mapSeq"},
       {"def f(x: [[[float]2]4]N) = mapGlb0(mapSeq(mapSeq(neg)), x)", "mapSeq(mapSeq(neg), p)",
        "neither scalars nor tuples of scalars"}});
  // A tuple result: computed once into private memory, each component stored as vectors.
  run_table(vectorise_outputs(2),
            {{"def f(x: [[float]4]N) = mapGlb0(mapSeq(a => tuple(neg(a), sq(a))), x)",
              "mapSeq(a => tuple(neg(a), sq(a)), p)",
              "def f(x: [[float]4]N) = mapGlb0(r => (p => zip(asScalar(mapSeq(id, asVector(2, "
              "map(get(0), p)))), asScalar(mapSeq(id, asVector(2, map(get(1), p))))))"
              "(toPrivate(mapSeq(a => tuple(neg(a), sq(a))))(r)), x)",
              n8}},
            {{"def f(x: [[float]3]N) = mapGlb0(mapSeq(a => tuple(neg(a), sq(a))), x)",
              "mapSeq(a => tuple(neg(a), sq(a)), p)", "2 does not divide"}});
  ir::Module three = parse_program("def f(x: [float]6) = mapSeq(neg, x)");
  CHECK_FALSE(applied(vectorise_outputs(3).apply(three.main().body, {})));
}

TEST_CASE("vectorise-copy") {
  run_table(
      vectorise_copy(4),
      {{"def f(x: [[float]4]N) = mapGlb0(mapSeq(id), x)", "mapSeq(id, p)",
        "def f(x: [[float]4]N) = mapGlb0(r => asScalar(mapSeq(id, asVector(4, r))), x)", n8}},
      {{"def f(x: [[float]4]N) = mapGlb0(mapSeq(neg), x)", "mapSeq(neg, p)",
        "not a call of mapSeq(id)"},
       {"def f(x: [[float]6]N) = mapGlb0(mapSeq(id), x)", "mapSeq(id, p)", "4 does not divide"}});
}

TEST_CASE("vectorize-map") {
  run_table(vectorize_map(4),
            {{"def f(x: [float]N) = map(neg, x)", "#0",
              "def f(x: [float]N) = asScalar(map(vectorize(4, neg), asVector(4, x)))", n8},
             {"def f(a: [float]N, b: [float]N) = map(add, zip(a, b))", "#0",
              "def f(a: [float]N, b: [float]N) = asScalar(map(vectorize(4, add), "
              "zip(asVector(4, a), asVector(4, b))))",
              n8}},
            {{"def f(x: [[float]N]M) = map(reduce(add, 0.0f), x)", "#0", "not a user function"},
             {"def f(x: [float]6) = map(neg, x)", "#0", "4 does not divide"},
             {"def f(x: [[float]N]M) = map(map(neg), x)", "#0", "not a user function"},
             {"def f(x: [float]N) = map(negsq, x)", "#0", "returns a tuple"}});
}

TEST_CASE("unroll-iterate") {
  run_table(unroll_iterate(2),
            {{"def f(x: [float]N) = iterate(4, y => map(neg, y), x)", "#0",
              "def f(x: [float]N) = iterate(2, y => map(neg, map(neg, y)), x)", n8},
             {"def f(x: [[float]N]M) = iterate(6, g => map2D(nbh => add(nbh[0][1], nbh[1][0]), "
              "slide2D(2, 1, pad2D(0, 1, wrap, g))), x)",
              "#0",
              "def f(x: [[float]N]M) = iterate(3, y => (g => map2D(nbh => add(nbh[0][1], "
              "nbh[1][0]), slide2D(2, 1, pad2D(0, 1, wrap, g))))((g => map2D(nbh => add(nbh[0][1], "
              "nbh[1][0]), slide2D(2, 1, pad2D(0, 1, wrap, g))))(y)), x)",
              {{"M", 3}, {"N", 5}}}},
            {{"def f(x: [float]N) = iterate(1, y => map(neg, y), x)", "#0",
              "the iteration count 1 is below the degree 2"},
             {"def f(x: [float]N) = map(neg, x)", "#0", "not a call of iterate"}});
  // A remainder: the steps left over after the fused ones.
  run_table(unroll_iterate(3),
            {{"def f(x: [float]N) = iterate(7, y => map(neg, y), x)", "#0",
              "def f(x: [float]N) = iterate(1, y => map(neg, y), iterate(2, y => map(neg, "
              "map(neg, map(neg, y))), x))",
              n8},
             {"def f(x: [[float]N]M) = iterate(5, g => map2D(nbh => add(nbh[0][1], nbh[1][0]), "
              "slide2D(2, 1, pad2D(0, 1, clamp, g))), x)",
              "#0",
              "def f(x: [[float]N]M) = iterate(2, g => map2D(nbh => add(nbh[0][1], nbh[1][0]), "
              "slide2D(2, 1, pad2D(0, 1, clamp, g))), iterate(1, y => (g => map2D(nbh => "
              "add(nbh[0][1], nbh[1][0]), slide2D(2, 1, pad2D(0, 1, clamp, g))))((g => map2D(nbh "
              "=> add(nbh[0][1], nbh[1][0]), slide2D(2, 1, pad2D(0, 1, clamp, g))))((g => "
              "map2D(nbh => add(nbh[0][1], nbh[1][0]), slide2D(2, 1, pad2D(0, 1, clamp, "
              "g))))(y))), x))",
              {{"M", 3}, {"N", 5}}}},
            {{"def f(x: [float]N) = iterate(2, y => map(neg, y), x)", "#0",
              "the iteration count 2 is below the degree 3"}});
  CHECK(unroll_iterate(3).name == "unroll-iterate(3)");
  CHECK_THROWS_AS(unroll_iterate(1), UserError);
}

TEST_CASE("pad-of-map") {
  run_table(
      pad_of_map(),
      {{"def f(x: [float]N) = pad(1, 2, clamp, map(neg, x))",
        "#0",
        "def f(x: [float]N) = map(neg, pad(1, 2, clamp, x))",
        {{"N", 5}}},
       {"def f(x: [float]N) = pad(2, 1, mirror, map(sq, x))",
        "#0",
        "def f(x: [float]N) = map(sq, pad(2, 1, mirror, x))",
        {{"N", 5}}},
       {"def f(x: [float]N) = pad(3, 0, wrap, map(neg, x))",
        "#0",
        "def f(x: [float]N) = map(neg, pad(3, 0, wrap, x))",
        {{"N", 2}}}},
      {{"def f(x: [float]N) = pad(1, 1, constant(1.0f), map(neg, x))", "#0", "a constant boundary"},
       {"def f(x: [float]N) = pad(1, 1, clamp, x)", "#0", "not a map"},
       {"def f(x: [float]N) = map(neg, x)", "#0", "not a call of pad"}});
}

TEST_CASE("hoist-wrap-padding") {
  const char* const two_steps =
      "def f(x: [[float]N]M) = pad2D(1, 1, wrap, map2D(nbh => add(nbh[0][1], nbh[2][2]), "
      "slide2D(3, 1, pad2D(1, 1, wrap, x))))";
  run_table(hoist_wrap_padding(),
            {{two_steps,
              "#0",
              "def f(x: [[float]N]M) = map2D(nbh => add(nbh[0][1], nbh[2][2]), slide2D(3, 1, "
              "pad2D(2, 2, wrap, x)))",
              {{"M", 3}, {"N", 4}}},
             {"def f(x: [[float]N]M) = pad2D(0, 2, wrap, map2D(nbh => add(nbh[0][0], nbh[1][1]), "
              "slide2D(2, 1, pad2D(0, 1, wrap, x))))",
              "#0",
              "def f(x: [[float]N]M) = map2D(nbh => add(nbh[0][0], nbh[1][1]), slide2D(2, 1, "
              "pad2D(0, 3, wrap, x)))",
              {{"M", 2}, {"N", 5}}}},
            {{"def f(x: [[float]N]M) = pad2D(1, 1, clamp, map2D(nbh => add(nbh[0][1], nbh[2][2]), "
              "slide2D(3, 1, pad2D(1, 1, clamp, x))))",
              "#0", "the boundary is not wrap"},
             {"def f(x: [[float]N]M) = pad2D(1, 1, wrap, map2D(nbh => add(nbh[0][1], nbh[2][2]), "
              "slide2D(3, 1, pad2D(1, 1, clamp, x))))",
              "#0", "not a wrap pad2D"},
             {"def f(x: [[float]N]M) = pad2D(1, 1, wrap, map2D(nbh => add(nbh[0][1], nbh[2][2]), "
              "slide2D(3, 1, pad2D(2, 2, wrap, x))))",
              "#0", "does not keep the grid's shape"},
             {"def f(x: [[float]N]M) = pad2D(1, 1, wrap, map2D(neg, x))", "#0", "not a slide2D"},
             {"def f(x: [[float]N]M) = map2D(neg, x)", "#0", "not a pad2D"}});
}

TEST_CASE("re-clamp-tile-edges") {
  // The rule's user functions, as the expected programs must define them.
  const std::string edge_funs =
      "userfun liftxTileEdge(i: int, n: int): int { return (i == 0 ? 1 : 0) + (i == n - 1 ? 2 : "
      "0); }\nuserfun liftxEdgePick(edge: int, inner: float, first: float, last: float, both: "
      "float): float { if (edge == 0) return inner; if (edge == 1) return first; if (edge == 2) "
      "return last; return both; }\n";
  auto expected = [&](const std::string& type, const std::string& tiles, int lo, int hi,
                      const std::string& boundary, const std::string& count) {
    return edge_funs +
           fmt::format("def f(x: {0}) = map(p => map(c => liftxEdgePick(get(1, p), get(0, c), "
                       "get(1, c), get(2, c), get(3, c)), zip(get(0, p), pad({2}, 0, {4}, "
                       "slide({5} - {2}, 1, get(0, p))[{2}]), pad(0, {3}, {4}, slide({5} - {3}, "
                       "1, get(0, p))[0]), pad({2}, {3}, {4}, slide({5} - {2} - {3}, 1, get(0, "
                       "p))[{2}]))), zip({1}, array({6}, liftxTileEdge)))",
                       type, tiles, lo, hi, boundary, tiles.substr(6, tiles.find(',') - 6), count);
  };
  run_table(
      reclamp_tile_edges(),
      {{"def f(x: [float]N) = slide(4, 2, pad(1, 1, clamp, x))",
        "#0",
        expected("[float]N", "slide(4, 2, pad(1, 1, clamp, x))", 1, 1, "clamp", "N /^ 2"),
        {{"N", 8}}},
       {"def f(x: [float]N) = slide(5, 2, pad(2, 1, mirror, x))",
        "#0",
        expected("[float]N", "slide(5, 2, pad(2, 1, mirror, x))", 2, 1, "mirror", "N /^ 2"),
        {{"N", 8}}},
       // A constant boundary: the halo beyond the edge becomes the constant again.
       {"def f(x: [float]N) = slide(4, 2, pad(1, 1, constant(0.5f), x))",
        "#0",
        expected("[float]N", "slide(4, 2, pad(1, 1, constant(0.5f), x))", 1, 1, "constant(0.5f)",
                 "N /^ 2"),
        {{"N", 8}}},
       // One tile: both edges.
       {"def f(x: [float]4) = slide(6, 4, pad(1, 1, clamp, x))",
        "#0",
        expected("[float]4", "slide(6, 4, pad(1, 1, clamp, x))", 1, 1, "clamp", "1"),
        {}}},
      {{"def f(x: [float]N) = slide(4, 2, pad(1, 1, wrap, x))", "#0",
        "not clamp, mirror or constant"},
       {"def f(x: [float]N) = slide(3, 2, pad(1, 1, clamp, x))", "#0", "do not carry the padding"},
       {"def f(x: [float]N) = slide(4, 1, pad(3, 0, mirror, x))", "#0", "mirrored halo wider"},
       {"def f(x: [float]N) = slide(3, 1, x)", "#0", "not a pad"},
       {"def f(x: [float]N) = pad(1, 1, clamp, x)", "#0", "not a call of slide"}});
}

TEST_CASE("split-reduce") {
  // Integer sums: a reordered float sum differs in its last bits, an integer one not at all.
  run_table(split_reduce(2),
            {{"def f(x: [int]N) = reduce(add, 0, x)", "#0",
              "def f(x: [int]N) = reduce(add, 0, join(map(reduce(add, 0), transpose(split(2, "
              "x)))))",
              n8},
             {"def f(x: [[int]N]M) = map(row => reduce(mult, 1, row)[0], x)",
              "reduce(mult, 1, row)",
              "def f(x: [[int]N]M) = map(row => reduce(mult, 1, join(map(reduce(mult, 1), "
              "transpose(split(2, row)))))[0], x)",
              {{"M", 3}, {"N", 6}}}},
            {{"def f(x: [int]N) = reduce(add, 1, x)", "#0", "not the identity of add_int"},
             {"def f(x: [float]N) = reduce(addsq, 0.0f, x)", "#0",
              "addsq is not known to be associative"},
             {"def f(x: [int]7) = reduce(add, 0, x)", "#0", "does not divide"},
             {"def f(x: [float]N) = map(neg, x)", "#0", "not a call of reduce"}});
  CHECK(split_reduce(4).name == "split-reduce(4)");
  CHECK_THROWS_AS(split_reduce(1), UserError);
}

TEST_CASE("reduce-map-fusion") {
  run_table(reduce_map_fusion(),
            {{"def f(x: [float]N) = reduce(add, 0.0f, map(neg, x))", "#0",
              "def f(x: [float]N) = reduce((a, e) => add(a, neg(e)), 0.0f, x)", n8},
             {"def f(x: [float]N, y: [float]N) = reduce(add, 0.0f, map(mult, zip(x, y)))", "#0",
              "def f(x: [float]N, y: [float]N) = reduce((a, e) => add(a, mult(e)), 0.0f, zip(x, "
              "y))",
              n8}},
            {{"def f(x: [float]N) = reduce(add, 0.0f, x)", "#0", "not a map"},
             {"def f(x: [float]N) = map(neg, x)", "#0", "not a call of reduce"}});
}

TEST_CASE("long-reduce-map-fusion") {
  run_table(long_reduce_map_fusion(),
            {{"def f(x: [float]N, y: [float]N) = reduce(add, 0.0f, map(mult, zip(x, y)))", "#0",
              "def f(x: [float]N, y: [float]N) = reduce((a, e) => add(a, mult(e)), 0.0f, zip(x, "
              "y))",
              n8},
             // A matrix product's dot products, inside two maps.
             {"def f(p: [[float]K]M, q: [[float]K]N) = map(r => map(c => reduce(add, 0.0f, "
              "map(mult, zip(r, c)))[0], q), p)",
              "reduce(add, 0.0f, map(mult, zip(r, c)))",
              "def f(p: [[float]K]M, q: [[float]K]N) = map(r => map(c => reduce((a, e) => add(a, "
              "mult(e)), 0.0f, zip(r, c))[0], q), p)",
              {{"K", 5}, {"M", 3}, {"N", 4}}}},
            {{"def f(x: [float]9) = reduce(add, 0.0f, map(neg, x))", "#0",
              "the reduced length is a constant"},
             {"def f(x: [float]N) = reduce(add, 0.0f, x)", "#0", "not a map"},
             {"def f(x: [float]N) = map(neg, x)", "#0", "not a call of reduce"}});
}

} // namespace liftx::rewrite::test
