// Every primitive of the IR evaluated on small random non-zero inputs, against loops.
#include "helpers.hpp"

#include "ir/interp/value.hpp"

using namespace liftx;
using namespace liftx::interp;
using namespace liftx::interp::test;

namespace {

/// Pad reference, written differently from the interpreter: reflect or shift step by step.
int64_t reference_pad_index(ir::Boundary::Kind kind, int64_t i, int64_t left, int64_t n) {
  int64_t j = i - left;
  switch (kind) {
  case ir::Boundary::Kind::Clamp:
    return j < 0 ? 0 : (j >= n ? n - 1 : j);
  case ir::Boundary::Kind::Mirror:
    while (j < 0 || j >= n)
      j = j < 0 ? -1 - j : 2 * n - 1 - j;
    return j;
  case ir::Boundary::Kind::Wrap:
    while (j < 0)
      j += n;
    while (j >= n)
      j -= n;
    return j;
  case ir::Boundary::Kind::Constant:
    return j >= 0 && j < n ? j : -1;
  }
  return -2;
}

} // namespace

TEST_CASE("split and join: chunks and round trip") {
  const Sizes sizes{{"N", 12}};
  ir::Expr x = ir::param(vec("N"), "x");
  HostArray in = input_for(vec("N"), sizes, 1);

  HostArray chunks = run(program({x}, ir::call(ir::split(4), {x})), {in}, sizes);
  std::vector<float> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      want.push_back(f(in, i * 4 + j));
  check_equal(chunks, {3, 4}, want);

  ir::Expr round_trip = ir::call(ir::join(), {ir::call(ir::split(3), {x})});
  HostArray back = run(program({x}, round_trip), {in}, sizes);
  CHECK(back.shape == std::vector<int64_t>{12});
  CHECK(back.data == in.data);
}

TEST_CASE("slide windows") {
  const Sizes sizes{{"N", 9}};
  ir::Expr x = ir::param(vec("N"), "x");
  HostArray in = input_for(vec("N"), sizes, 2);
  HostArray out = run(program({x}, ir::call(ir::slide(3, 2), {x})), {in}, sizes);
  std::vector<float> want;
  for (int w = 0; w < 4; ++w)
    for (int k = 0; k < 3; ++k)
      want.push_back(f(in, 2 * w + k));
  check_equal(out, {4, 3}, want);
}

TEST_CASE("slideShifted: the last window ends at the array's end; joinShifted puts rows back") {
  ir::Expr x = ir::param(vec("N"), "x");
  for (const int64_t n : {int64_t(10), int64_t(12), int64_t(4)}) {
    CAPTURE(n);
    const Sizes sizes{{"N", n}};
    HostArray in = input_for(vec("N"), sizes, 3);
    // Windows of 4 at step 4: at 0, 4, then shifted back to n - 4 where 4 does not divide n.
    HostArray out = run(program({x}, ir::call(ir::slide_shifted(4, 4), {x})), {in}, sizes);
    const int64_t windows = (n - 4 + 3) / 4 + 1;
    std::vector<float> want;
    for (int64_t w = 0; w < windows; ++w)
      for (int64_t k = 0; k < 4; ++k)
        want.push_back(f(in, std::min(4 * w, n - 4) + k));
    check_equal(out, {windows, 4}, want);
    // joinShifted undoes it: every element back in its place once.
    const ir::Expr round_trip =
        ir::call(ir::join_shifted(arith::var("N"), 0), {ir::call(ir::slide_shifted(4, 4), {x})});
    HostArray back = run(program({x}, round_trip), {in}, sizes);
    CHECK(back.shape == std::vector<int64_t>{n});
    CHECK(back.data == in.data);
  }
  // Overlapping windows (size 5, step 3) of 11: at 0, 3, then 6.
  const Sizes sizes{{"N", 11}};
  HostArray in = input_for(vec("N"), sizes, 4);
  HostArray out = run(program({x}, ir::call(ir::slide_shifted(5, 3), {x})), {in}, sizes);
  std::vector<float> want;
  for (int64_t start : {0, 3, 6})
    for (int64_t k = 0; k < 5; ++k)
      want.push_back(f(in, start + k));
  check_equal(out, {3, 5}, want);
}

TEST_CASE("slideShifted and joinShifted refuse lengths they do not fit, and margins not left") {
  ir::Expr x = ir::param(vec("N"), "x");
  // Types: no window, no step, rows of nothing, a negative margin.
  CHECK_THROWS_AS(ir::call(ir::slide_shifted(3, 0), {x}), UserError);
  CHECK_THROWS_AS(ir::call(ir::slide_shifted(0, 1), {x}), UserError);
  ir::Expr empty_rows = ir::param(array_of(array_of(ir::Type::float_(), 0), arith::var("N")), "e");
  CHECK_THROWS_AS(ir::call(ir::join_shifted(arith::var("N"), 0), {empty_rows}), UserError);
  CHECK_THROWS_AS(
      ir::call(ir::join_shifted(arith::var("N"), -1), {ir::call(ir::slide_shifted(4, 4), {x})}),
      UserError);
  const ir::Program windows = program({x}, ir::call(ir::slide_shifted(4, 4), {x}));
  const Sizes short_sizes{{"N", 3}};
  CHECK_THROWS_WITH_AS(run(windows, {input_for(vec("N"), short_sizes, 5)}, short_sizes),
                       doctest::Contains("the window is longer than the array"), UserError);
  // Rows of 4 over N with a margin of 2: the last row starts at N - 4 >= 2 and adds
  // N - 4 * (rows - 1) >= 2 elements past the others.
  const ir::Program joined = program({x}, ir::call(ir::join_shifted(arith::var("N"), 2),
                                                   {ir::call(ir::slide_shifted(4, 4), {x})}));
  for (const int64_t n : {int64_t(10), int64_t(6), int64_t(8)}) {
    const Sizes sizes{{"N", n}};
    HostArray in = input_for(vec("N"), sizes, 6);
    CHECK(run(joined, {in}, sizes).data == in.data);
  }
  const Sizes one_new{{"N", 9}}; // rows at 0, 4, 5: the last adds one element
  CHECK_THROWS_WITH_AS(run(joined, {input_for(vec("N"), one_new, 7)}, one_new),
                       doctest::Contains("less than the margin"), UserError);
  const Sizes too_short{{"N", 5}}; // the last row would start at 1
  CHECK_THROWS_WITH_AS(run(joined, {input_for(vec("N"), too_short, 8)}, too_short),
                       doctest::Contains("do not fit the length"), UserError);
}

TEST_CASE("pad: every boundary mode, including several periods") {
  const Sizes sizes{{"N", 4}};
  ir::Expr x = ir::param(vec("N"), "x");
  HostArray in = input_for(vec("N"), sizes, 3);
  struct Case {
    ir::Boundary boundary;
    int64_t left, right;
  };
  const std::vector<Case> cases = {
      {{ir::Boundary::Kind::Clamp}, 2, 3},          {{ir::Boundary::Kind::Mirror}, 2, 3},
      {{ir::Boundary::Kind::Mirror}, 9, 10}, // beyond one period (2n = 8) on both sides
      {{ir::Boundary::Kind::Wrap}, 2, 3},           {{ir::Boundary::Kind::Wrap}, 9, 10},
      {{ir::Boundary::Kind::Constant, 7.5f}, 2, 3},
  };
  for (const Case& c : cases) {
    INFO("boundary " << static_cast<int>(c.boundary.kind) << " left " << c.left);
    ir::Expr body = ir::call(ir::pad(c.left, c.right, c.boundary), {x});
    HostArray out = run(program({x}, body), {in}, sizes);
    std::vector<float> want;
    for (int64_t i = 0; i < c.left + 4 + c.right; ++i) {
      const int64_t j = reference_pad_index(c.boundary.kind, i, c.left, 4);
      want.push_back(j < 0 ? 7.5f : f(in, j));
    }
    check_equal(out, {c.left + 4 + c.right}, want);
  }
}

TEST_CASE("pad index functions by hand") {
  // n = 3, [a b c]: mirror continues c c b a | a b c | c b a a b c c ...
  std::vector<int64_t> mirror;
  for (int64_t i = 0; i < 13; ++i)
    mirror.push_back(pad_source_index(PadMode::Mirror, i, 4, 3));
  CHECK(mirror == std::vector<int64_t>{2, 2, 1, 0, 0, 1, 2, 2, 1, 0, 0, 1, 2});
  std::vector<int64_t> wrap;
  for (int64_t i = 0; i < 9; ++i)
    wrap.push_back(pad_source_index(PadMode::Wrap, i, 4, 3));
  CHECK(wrap == std::vector<int64_t>{2, 0, 1, 2, 0, 1, 2, 0, 1});
  CHECK(pad_source_index(PadMode::Clamp, 0, 4, 3) == 0);
  CHECK(pad_source_index(PadMode::Clamp, 8, 4, 3) == 2);
  CHECK(pad_source_index(PadMode::Constant, 3, 4, 3) == -1);
  CHECK(pad_source_index(PadMode::Constant, 5, 4, 3) == 1);
}

TEST_CASE("pad2D with a constant pads whole rows") {
  const Sizes sizes{{"M", 2}, {"N", 3}};
  ir::Expr g = ir::param(grid("M", "N"), "g");
  HostArray in = input_for(grid("M", "N"), sizes, 4);
  ir::Boundary zero{ir::Boundary::Kind::Constant, 0.5f};
  HostArray out = run(program({g}, ir::pad_2d(1, 2, zero, g)), {in}, sizes);
  std::vector<float> want;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 6; ++j) {
      const bool inside = i >= 1 && i < 3 && j >= 1 && j < 4;
      want.push_back(inside ? f2(in, i - 1, j - 1) : 0.5f);
    }
  check_equal(out, {5, 6}, want);
}

TEST_CASE("transpose") {
  const Sizes sizes{{"M", 3}, {"N", 5}};
  ir::Expr g = ir::param(grid("M", "N"), "g");
  HostArray in = input_for(grid("M", "N"), sizes, 5);
  HostArray out = run(program({g}, ir::call(ir::transpose(), {g})), {in}, sizes);
  std::vector<float> want;
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 3; ++i)
      want.push_back(f2(in, i, j));
  check_equal(out, {5, 3}, want);
}

TEST_CASE("zip, get and tuple results") {
  const Sizes sizes{{"N", 6}};
  ir::Expr a = ir::param(vec("N"), "a");
  ir::Expr b = ir::param(vec("N"), "b");
  HostArray in_a = input_for(vec("N"), sizes, 6);
  HostArray in_b = input_for(vec("N"), sizes, 7);

  // Tuple-typed result: one extra innermost dimension of components.
  HostArray zipped = run(program({a, b}, ir::call(ir::zip(), {a, b})), {in_a, in_b}, sizes);
  std::vector<float> want;
  for (int i = 0; i < 6; ++i) {
    want.push_back(f(in_a, i));
    want.push_back(f(in_b, i));
  }
  check_equal(zipped, {6, 2}, want);

  // get(1) of each pair, and a - b through get on both components.
  ir::Expr p = ir::param(ir::Type::tuple({ir::Type::float_(), ir::Type::float_()}), "p");
  ir::Fun sub = userfun("sub", {{"x", ir::ScalarKind::Float}, {"y", ir::ScalarKind::Float}},
                        ir::ScalarKind::Float, "return x - y;");
  ir::Fun diff =
      ir::lambda({p}, ir::call(sub, {ir::call(ir::get(0), {p}), ir::call(ir::get(1), {p})}));
  HostArray out = run(program({a, b}, ir::call(ir::map(diff), {ir::call(ir::zip(), {a, b})})),
                      {in_a, in_b}, sizes);
  std::vector<float> want_diff;
  for (int i = 0; i < 6; ++i)
    want_diff.push_back(f(in_a, i) - f(in_b, i));
  check_equal(out, {6}, want_diff);
}

TEST_CASE("at with constant and symbolic indices; scalar results") {
  const Sizes sizes{{"N", 5}};
  ir::Expr x = ir::param(vec("N"), "x");
  HostArray in = input_for(vec("N"), sizes, 8);
  HostArray second = run(program({x}, ir::call(ir::at(2), {x})), {in}, sizes);
  CHECK(second.shape.empty());
  CHECK(second.size() == 1);
  REQUIRE(second.data.size() == 1);
  CHECK(second.data[0] == in.data[2]);
  HostArray last = run(program({x}, ir::call(ir::at(arith::size_var("N") - 1), {x})), {in}, sizes);
  CHECK(last.data[0] == in.data[4]);
}

TEST_CASE("reduce folds left to right from init, in float") {
  const Sizes sizes{{"N", 17}};
  ir::Expr x = ir::param(vec("N"), "x");
  HostArray in = input_for(vec("N"), sizes, 9);
  // Neither associative nor commutative: any other order gives other bits.
  ir::Fun step = userfun("foldStep", {{"acc", ir::ScalarKind::Float}, {"v", ir::ScalarKind::Float}},
                         ir::ScalarKind::Float, "return acc * 0.75f - v;");
  float acc = 0.3f;
  for (int i = 0; i < 17; ++i)
    acc = acc * 0.75f - f(in, i);
  for (bool sequential : {false, true}) {
    ir::Fun r =
        sequential ? ir::reduce_seq(step, ir::literal(0.3f)) : ir::reduce(step, ir::literal(0.3f));
    HostArray out = run(program({x}, ir::call(r, {x})), {in}, sizes);
    check_equal(out, {1}, {acc});
  }
  // Summation with add agrees with a float loop.
  float sum = 0.0f;
  for (int i = 0; i < 17; ++i)
    sum += f(in, i);
  HostArray total =
      run(program({x}, ir::call(ir::reduce(add(), ir::literal(0.0f)), {x})), {in}, sizes);
  check_equal(total, {1}, {sum});
}

TEST_CASE("iterate applies its function k times") {
  const Sizes sizes{{"N", 8}};
  ir::Expr x = ir::param(vec("N"), "x");
  HostArray in = input_for(vec("N"), sizes, 10);
  ir::Fun affine = userfun("affine", {{"v", ir::ScalarKind::Float}}, ir::ScalarKind::Float,
                           "return v * 0.5f + 1.0f;");
  HostArray out = run(program({x}, ir::call(ir::iterate(5, ir::map(affine)), {x})), {in}, sizes);
  std::vector<float> want;
  for (int i = 0; i < 8; ++i) {
    float v = f(in, i);
    for (int k = 0; k < 5; ++k)
      v = v * 0.5f + 1.0f;
    want.push_back(v);
  }
  check_equal(out, {8}, want);

  // Zero iterations is the identity; layout-only bodies work too (transpose twice).
  HostArray same = run(program({x}, ir::call(ir::iterate(0, ir::map(affine)), {x})), {in}, sizes);
  CHECK(same.data == in.data);
  const Sizes sizes2{{"N", 4}};
  const ir::Type square = array_of(vec("N"), arith::size_var("N"));
  ir::Expr g = ir::param(square, "g");
  HostArray gin = input_for(square, sizes2, 11);
  HostArray twice =
      run(program({g}, ir::call(ir::iterate(2, ir::transpose()), {g})), {gin}, sizes2);
  CHECK(twice.shape == gin.shape);
  CHECK(twice.data == gin.data);
}

TEST_CASE("array(n, f) generates from index and length") {
  const Sizes sizes{{"N", 6}};
  ir::Expr x = ir::param(vec("N"), "x");
  ir::Expr i = ir::param(ir::Type::int_(), "i");
  ir::Expr n = ir::param(ir::Type::int_(), "n");
  ir::Fun gen = userfun("gen", {{"i", ir::ScalarKind::Int}, {"n", ir::ScalarKind::Int}},
                        ir::ScalarKind::Float, "return (float)(i * 10 + n) * 0.5f;");
  ir::Expr generated =
      ir::call(ir::generate(arith::size_var("N"), ir::lambda({i, n}, ir::call(gen, {i, n}))), {});
  // Added to x so the program has a parameter carrying N.
  ir::Expr body = ir::call(ir::map(add()), {ir::call(ir::zip(), {x, generated})});
  HostArray in = input_for(vec("N"), sizes, 12);
  HostArray out = run(program({x}, body), {in}, sizes);
  std::vector<float> want;
  for (int k = 0; k < 6; ++k)
    want.push_back(f(in, k) + static_cast<float>(k * 10 + 6) * 0.5f);
  check_equal(out, {6}, want);
}

TEST_CASE("nested maps and lowered primitives mean the same") {
  const Sizes sizes{{"M", 4}, {"N", 7}};
  ir::Expr g = ir::param(grid("M", "N"), "g");
  HostArray in = input_for(grid("M", "N"), sizes, 13);
  ir::Fun square = userfun("square", {{"v", ir::ScalarKind::Float}}, ir::ScalarKind::Float,
                           "return v * v - 0.25f;");
  HostArray high = run(program({g}, ir::call(ir::map_2d(square), {g})), {in}, sizes);
  std::vector<float> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 7; ++j)
      want.push_back(f2(in, i, j) * f2(in, i, j) - 0.25f);
  check_equal(high, {4, 7}, want);

  const std::vector<ir::Fun> lowered = {
      ir::map_glb(1, ir::map_glb(0, square)),
      ir::map_wrg(0, ir::map_lcl(0, square)),
      ir::map_seq(ir::map_seq(square)),
      ir::map_glb(0, ir::to_global(ir::map_seq(ir::to_private(square)))),
      ir::map_wrg(0, ir::to_local(ir::map_lcl(0, square))),
  };
  for (const ir::Fun& fun : lowered) {
    INFO(ir::fun_name(fun));
    HostArray out = run(program({g}, ir::call(fun, {g})), {in}, sizes);
    CHECK(out.shape == high.shape);
    CHECK(out.data == high.data);
  }
  // id is a copy, also under map.
  HostArray copied = run(program({g}, ir::call(ir::map(ir::id()), {g})), {in}, sizes);
  CHECK(copied.data == in.data);
  // Reductions of rows: reduce and reduceSeq agree, under map and mapGlb.
  HostArray rows =
      run(program({g}, ir::call(ir::map(ir::reduce(add(), ir::literal(0.0f))), {g})), {in}, sizes);
  HostArray rows_seq =
      run(program({g}, ir::call(ir::map_glb(0, ir::reduce_seq(add(), ir::literal(0.0f))), {g})),
          {in}, sizes);
  REQUIRE(rows.shape == std::vector<int64_t>{4, 1});
  CHECK(rows.data == rows_seq.data);
  for (int i = 0; i < 4; ++i) {
    float s = 0.0f;
    for (int j = 0; j < 7; ++j)
      s += f2(in, i, j);
    CHECK(rows.data[static_cast<size_t>(i)] == static_cast<double>(s));
  }
}

TEST_CASE("tuple arguments spread over lambdas and user functions") {
  const Sizes sizes{{"N", 5}};
  ir::Expr a = ir::param(vec("N"), "a");
  ir::Expr b = ir::param(vec("N"), "b");
  HostArray in_a = input_for(vec("N"), sizes, 14);
  HostArray in_b = input_for(vec("N"), sizes, 15);
  ir::Expr zipped = ir::call(ir::zip(), {a, b});

  ir::Fun weighted =
      userfun("weighted", {{"u", ir::ScalarKind::Float}, {"v", ir::ScalarKind::Float}},
              ir::ScalarKind::Float, "return u - 2.0f * v;");
  // map(userfun) over pairs: the pair provides both arguments.
  HostArray direct =
      run(program({a, b}, ir::call(ir::map(weighted), {zipped})), {in_a, in_b}, sizes);
  // map((u, v) => weighted(v, u)): a two-parameter lambda receives the components.
  ir::Expr u = ir::param(ir::Type::float_(), "u");
  ir::Expr v = ir::param(ir::Type::float_(), "v");
  ir::Fun swapped = ir::lambda({u, v}, ir::call(weighted, {v, u}));
  HostArray via_lambda =
      run(program({a, b}, ir::call(ir::map(swapped), {zipped})), {in_a, in_b}, sizes);
  std::vector<float> want_direct, want_swapped;
  for (int i = 0; i < 5; ++i) {
    want_direct.push_back(f(in_a, i) - 2.0f * f(in_b, i));
    want_swapped.push_back(f(in_b, i) - 2.0f * f(in_a, i));
  }
  check_equal(direct, {5}, want_direct);
  check_equal(via_lambda, {5}, want_swapped);
}

TEST_CASE("map(zip) over zip2D and map2D of a user function over pairs") {
  const Sizes sizes{{"M", 3}, {"N", 4}};
  ir::Expr a = ir::param(grid("M", "N"), "a");
  ir::Expr b = ir::param(grid("M", "N"), "b");
  HostArray in_a = input_for(grid("M", "N"), sizes, 16);
  HostArray in_b = input_for(grid("M", "N"), sizes, 17);
  ir::Expr zipped = ir::zip_2d({a, b});
  HostArray pairs = run(program({a, b}, zipped), {in_a, in_b}, sizes);
  std::vector<float> want_pairs, want_products;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      want_pairs.push_back(f2(in_a, i, j));
      want_pairs.push_back(f2(in_b, i, j));
      want_products.push_back(f2(in_a, i, j) * f2(in_b, i, j));
    }
  check_equal(pairs, {3, 4, 2}, want_pairs);
  HostArray products =
      run(program({a, b}, ir::call(ir::map_2d(mult()), {zipped})), {in_a, in_b}, sizes);
  check_equal(products, {3, 4}, want_products);
}

TEST_CASE("slide2D windows of a padded grid") {
  const Sizes sizes{{"M", 3}, {"N", 4}};
  ir::Expr g = ir::param(grid("M", "N"), "g");
  HostArray in = input_for(grid("M", "N"), sizes, 18);
  ir::Boundary wrap{ir::Boundary::Kind::Wrap};
  HostArray out = run(program({g}, ir::slide_2d(3, 1, ir::pad_2d(1, 1, wrap, g))), {in}, sizes);
  REQUIRE(out.shape == std::vector<int64_t>{3, 4, 3, 3});
  std::vector<float> want;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int di = 0; di < 3; ++di)
        for (int dj = 0; dj < 3; ++dj)
          want.push_back(f2(in, (i + di - 1 + 3) % 3, (j + dj - 1 + 4) % 4));
  check_equal(out, {3, 4, 3, 3}, want);
}
