// Stencil programs against plain loops; sizes, input/output files, summaries and errors.
#include "helpers.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace liftx;
using namespace liftx::interp;
using namespace liftx::interp::test;

namespace {

ir::Fun jacobi5() {
  return userfun("jacobi5",
                 {{"c", ir::ScalarKind::Float},
                  {"n", ir::ScalarKind::Float},
                  {"s", ir::ScalarKind::Float},
                  {"e", ir::ScalarKind::Float},
                  {"w", ir::ScalarKind::Float}},
                 ir::ScalarKind::Float, "return 0.2f * (c + n + s + e + w);");
}

ir::Expr at2(const ir::Expr& nbh, int i, int j) {
  return ir::call(ir::at(j), {ir::call(ir::at(i), {nbh})});
}

/// jacobi2D 5-point: map2D(nbh => jacobi5(...), slide2D(3, 1, pad2D(1, 1, clamp, grid)))
ir::Program jacobi_program() {
  ir::Expr g = ir::param(grid("M", "N"), "grid");
  ir::Expr padded = ir::pad_2d(1, 1, ir::Boundary{ir::Boundary::Kind::Clamp}, g);
  ir::Expr windows = ir::slide_2d(3, 1, padded);
  const auto* rows = windows.type().as<ir::ArrayType>();
  const auto* cols = rows->element.as<ir::ArrayType>();
  ir::Expr nbh = ir::param(cols->element, "nbh");
  ir::Fun point =
      ir::lambda({nbh}, ir::call(jacobi5(), {at2(nbh, 1, 1), at2(nbh, 0, 1), at2(nbh, 2, 1),
                                             at2(nbh, 1, 2), at2(nbh, 1, 0)}));
  return program({g}, ir::call(ir::map_2d(point), {windows}));
}

std::vector<float> jacobi_reference(const HostArray& in) {
  const int64_t m = in.shape[0], n = in.shape[1];
  auto cl = [](int64_t v, int64_t len) { return v < 0 ? 0 : (v >= len ? len - 1 : v); };
  std::vector<float> out;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float c = f2(in, i, j);
      const float north = f2(in, cl(i - 1, m), j);
      const float south = f2(in, cl(i + 1, m), j);
      const float east = f2(in, i, cl(j + 1, n));
      const float west = f2(in, i, cl(j - 1, n));
      out.push_back(0.2f * (c + north + south + east + west));
    }
  return out;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("liftx_interp_test_" + name)).string();
}

void write_floats(const std::string& path, size_t count) {
  std::ofstream out(path, std::ios::binary);
  std::vector<float> v(count, 1.25f);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(count * 4));
}

std::string error_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

} // namespace

TEST_CASE("1D 3-point stencil equals a loop") {
  const Sizes sizes{{"N", 37}};
  ir::Expr x = ir::param(vec("N"), "x");
  ir::Fun blur = userfun(
      "blur3",
      {{"l", ir::ScalarKind::Float}, {"c", ir::ScalarKind::Float}, {"r", ir::ScalarKind::Float}},
      ir::ScalarKind::Float, "return 0.25f * l + 0.5f * c + 0.25f * r;");
  ir::Expr nbh = ir::param(array_of(ir::Type::float_(), 3), "nbh");
  ir::Fun point =
      ir::lambda({nbh}, ir::call(blur, {ir::call(ir::at(0), {nbh}), ir::call(ir::at(1), {nbh}),
                                        ir::call(ir::at(2), {nbh})}));
  for (auto kind : {ir::Boundary::Kind::Clamp, ir::Boundary::Kind::Mirror}) {
    ir::Expr padded = ir::call(ir::pad(1, 1, ir::Boundary{kind}), {x});
    ir::Program p = program({x}, ir::call(ir::map(point), {ir::call(ir::slide(3, 1), {padded})}));
    HostArray in = input_for(vec("N"), sizes, 21);
    HostArray out = run(p, {in}, sizes);
    std::vector<float> want;
    for (int64_t i = 0; i < 37; ++i) {
      // Clamp and mirror agree for a padding of one: the edge element repeats.
      const float l = f(in, i == 0 ? 0 : i - 1);
      const float r = f(in, i == 36 ? 36 : i + 1);
      want.push_back(0.25f * l + 0.5f * f(in, i) + 0.25f * r);
    }
    check_equal(out, {37}, want);
  }
}

TEST_CASE("jacobi2D 5-point equals a loop on non-square grids") {
  ir::Program p = jacobi_program();
  for (auto [m, n] : {std::pair{13, 21}, std::pair{20, 7}, std::pair{1, 5}}) {
    const Sizes sizes{{"M", m}, {"N", n}};
    HostArray in = input_for(grid("M", "N"), sizes, 100 + static_cast<uint64_t>(m));
    HostArray out = run(p, {in}, sizes);
    check_equal(out, {m, n}, jacobi_reference(in));
  }
}

TEST_CASE("iterated jacobi equals repeated loops") {
  // iterate(3, g => jacobi(g)) as a lambda over the grid.
  ir::Expr g = ir::param(grid("M", "N"), "g");
  ir::Program step = jacobi_program();
  ir::Fun body = ir::lambda({step.params[0]}, step.body);
  ir::Program p = program({g}, ir::call(ir::iterate(3, body), {g}));
  const Sizes sizes{{"M", 9}, {"N", 6}};
  HostArray in = input_for(grid("M", "N"), sizes, 7);
  HostArray want = in;
  for (int k = 0; k < 3; ++k) {
    std::vector<float> next = jacobi_reference(want);
    want.data.assign(next.begin(), next.end());
  }
  HostArray out = run(p, {in}, sizes);
  CHECK(out.shape == want.shape);
  CHECK(out.data == want.data);
}

TEST_CASE("jacobi on a 128x192 grid is fast") {
  ir::Program p = jacobi_program();
  const Sizes sizes{{"M", 128}, {"N", 192}};
  HostArray in = input_for(grid("M", "N"), sizes, 3);
  const auto start = std::chrono::steady_clock::now();
  HostArray out = run(p, {in}, sizes);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(out.data.size() == 128u * 192u);
  CHECK(seconds < 5.0); // generous for Debug and sanitizer builds
}

TEST_CASE("3D 7-point stencil with slide3D and pad3D equals a loop") {
  const ir::Type cube = array_of(grid("N", "O"), arith::size_var("M"));
  ir::Expr x = ir::param(cube, "x");
  ir::Expr windows =
      ir::slide_3d(3, 1, ir::pad_3d(1, 1, ir::Boundary{ir::Boundary::Kind::Mirror}, x));
  ir::Type window = windows.type();
  for (int level = 0; level < 3; ++level)
    window = window.as<ir::ArrayType>()->element;
  REQUIRE(ir::array_rank(window) == 3);
  ir::Expr nbh = ir::param(window, "nbh");
  auto at3 = [&](int i, int j, int k) {
    return ir::call(ir::at(k), {ir::call(ir::at(j), {ir::call(ir::at(i), {nbh})})});
  };
  std::vector<ir::UserFunParam> params;
  for (const char* name : {"c", "u", "d", "n", "s", "w", "e"})
    params.push_back({name, ir::ScalarKind::Float});
  ir::Fun seven = userfun("seven", params, ir::ScalarKind::Float,
                          "return 0.5f * c + 0.125f * (u - d) + 0.0625f * (n + s + w + e);");
  ir::Fun point =
      ir::lambda({nbh}, ir::call(seven, {at3(1, 1, 1), at3(0, 1, 1), at3(2, 1, 1), at3(1, 0, 1),
                                         at3(1, 2, 1), at3(1, 1, 0), at3(1, 1, 2)}));
  ir::Program p = program({x}, ir::call(ir::map_3d(point), {windows}));
  const Sizes sizes{{"M", 3}, {"N", 4}, {"O", 5}};
  HostArray in = input_for(cube, sizes, 31);
  auto v = [&](int64_t i, int64_t j, int64_t k) {
    auto mirror = [](int64_t a, int64_t n) {
      return a < 0 ? -1 - a : (a >= n ? 2 * n - 1 - a : a);
    };
    return static_cast<float>(in.data.at((mirror(i, 3) * 4 + mirror(j, 4)) * 5 + mirror(k, 5)));
  };
  std::vector<float> want;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 5; ++k)
        want.push_back(0.5f * v(i, j, k) + 0.125f * (v(i - 1, j, k) - v(i + 1, j, k)) +
                       0.0625f *
                           (v(i, j - 1, k) + v(i, j + 1, k) + v(i, j, k - 1) + v(i, j, k + 1)));
  check_equal(run(p, {in}, sizes), {3, 4, 5}, want);
}

TEST_CASE("int, double and bool programs") {
  const Sizes sizes{{"N", 9}};
  const ir::Type ints = array_of(ir::Type::int_(), arith::size_var("N"));
  ir::Expr a = ir::param(ints, "a");
  ir::Expr b = ir::param(ints, "b");
  ir::Fun add_int = ir::user_fun(ir::UserFunDef::builtin("add_int"));
  HostArray ia = input_for(ints, sizes, 41), ib = input_for(ints, sizes, 42);
  HostArray sum = run(program({a, b}, ir::call(ir::map(add_int), {ir::call(ir::zip(), {a, b})})),
                      {ia, ib}, sizes);
  CHECK(sum.kind == ir::ScalarKind::Int);
  for (size_t k = 0; k < 9; ++k)
    CHECK(sum.data[k] == ia.data[k] + ib.data[k]);

  const ir::Type doubles = array_of(ir::Type::double_(), arith::size_var("N"));
  ir::Expr d = ir::param(doubles, "d");
  ir::Fun add_double = ir::user_fun(ir::UserFunDef::builtin("add_double"));
  HostArray in_d = input_for(doubles, sizes, 43);
  HostArray total =
      run(program({d}, ir::call(ir::reduce(add_double, ir::literal(0.5)), {d})), {in_d}, sizes);
  double want = 0.5;
  for (double v : in_d.data)
    want += v;
  CHECK(total.kind == ir::ScalarKind::Double);
  CHECK(total.data[0] == want);

  // A bool result: which elements are positive.
  ir::Fun positive =
      userfun("positive", {{"v", ir::ScalarKind::Int}}, ir::ScalarKind::Bool, "return v > 0;");
  HostArray flags = run(program({a}, ir::call(ir::map(positive), {a})), {ia}, sizes);
  CHECK(flags.kind == ir::ScalarKind::Bool);
  for (size_t k = 0; k < 9; ++k)
    CHECK(flags.data[k] == (ia.data[k] > 0 ? 1.0 : 0.0));
}

TEST_CASE("out-of-bounds at is a user error") {
  ir::Expr x = ir::param(vec("N"), "x");
  ir::Program p = program({x}, ir::call(ir::at(arith::size_var("N") - 3), {x}));
  CHECK(error_of([&] {
          run(p, {input_for(vec("N"), {{"N", 2}}, 1)}, {{"N", 2}});
        }) == "error: index -1 is out of bounds of an array of length 2");
}

TEST_CASE("deeply nested programs evaluate") {
  const Sizes sizes{{"N", 16}};
  ir::Expr x = ir::param(vec("N"), "x");
  ir::Fun half = userfun("halve", {{"v", ir::ScalarKind::Float}}, ir::ScalarKind::Float,
                         "return v * 0.5f + 0.25f;");
  ir::Expr body = x;
  for (int k = 0; k < 300; ++k)
    body =
        ir::call(ir::join(), {ir::call(ir::map(ir::map(half)), {ir::call(ir::split(4), {body})})});
  HostArray in = input_for(vec("N"), sizes, 5);
  HostArray out = run(program({x}, body), {in}, sizes);
  for (int64_t i = 0; i < 16; ++i) {
    float v = f(in, i);
    for (int k = 0; k < 300; ++k)
      v = v * 0.5f + 0.25f;
    CHECK(out.data[static_cast<size_t>(i)] == static_cast<double>(v));
  }
  // Many iterations of a layout-only body do not chain views without bound.
  const ir::Type square = array_of(vec("N"), arith::size_var("N"));
  ir::Expr g = ir::param(square, "g");
  HostArray gin = input_for(square, sizes, 6);
  HostArray back =
      run(program({g}, ir::call(ir::iterate(2000, ir::transpose()), {g})), {gin}, sizes);
  CHECK(back.data == gin.data);
}

TEST_CASE("size checks") {
  ir::Expr g = ir::param(grid("M", "N"), "g");
  ir::Program p = program({g}, ir::call(ir::transpose(), {g}));
  CHECK_NOTHROW(check_sizes(p, {{"M", 2}, {"N", 3}}));
  CHECK(error_of([&] {
          check_sizes(p, {{"N", 3}});
        }) == "error: missing size M (the program has sizes M, N)");
  CHECK(error_of([&] { check_sizes(p, {}); }) ==
        "error: missing sizes M, N (the program has sizes M, N)");
  CHECK(error_of([&] {
          check_sizes(p, {{"M", 2}, {"N", 3}, {"K", 1}});
        }) == "error: unknown size K (the program has sizes M, N)");
  CHECK(error_of([&] {
          check_sizes(p, {{"M", 0}, {"N", 3}});
        }) == "error: size M must be at least 1, got 0");
  HostArray in = input_for(grid("M", "N"), {{"M", 2}, {"N", 3}}, 1);
  CHECK(error_of([&] { run(p, {in}, {{"M", 2}}); }).find("missing size N") != std::string::npos);
  // Inputs must match the parameter shapes.
  CHECK(error_of([&] {
          run(p, {in}, {{"M", 3}, {"N", 2}});
        }) == "error: input 1 has shape [2, 3], parameter g: [[float]N]M needs [3, 2] (M=3, N=2)");
  CHECK(error_of([&] {
          run(p, {}, {{"M", 2}, {"N", 3}});
        }) == "error: program test takes 1 input, got 0");
}

TEST_CASE("inexact split and slide are located user errors") {
  ir::Expr x = ir::param(vec("N"), "x");
  const SourceLoc loc{"prog.lift", 3, 7};
  ir::Program p = program({x}, ir::call(ir::split(4), {x}, loc));
  HostArray in = input_for(vec("N"), {{"N", 66}}, 2);
  CHECK(error_of([&] {
          run(p, {in}, {{"N", 66}});
        }) == "prog.lift:3:7: error: split(4) of an array of length 66: 66 is not a multiple of 4");
  // The type of the result names the inexact division too.
  std::string shape_error = error_of([&] { concrete_shape(p.result_type(), {{"N", 66}}); });
  CHECK(shape_error.find("66 is not a multiple of 4") != std::string::npos);

  ir::Program s = program({x}, ir::call(ir::slide(3, 2), {x}));
  HostArray in10 = input_for(vec("N"), {{"N", 10}}, 2);
  CHECK(error_of([&] {
          run(s, {in10}, {{"N", 10}});
        }) == "error: slide(3, 2) of an array of length 10: 10 - 3 = 7 is not a multiple of 2");
  CHECK_NOTHROW(run(s, {input_for(vec("N"), {{"N", 11}}, 2)}, {{"N", 11}}));
}

TEST_CASE("concrete shapes") {
  CHECK(concrete_shape(grid("M", "N"), {{"M", 4}, {"N", 6}}) == std::vector<int64_t>{4, 6});
  CHECK(concrete_shape(ir::Type::float_(), {}).empty());
  ir::Type pairs =
      array_of(ir::Type::tuple({ir::Type::float_(), ir::Type::float_()}), arith::size_var("N") + 2);
  CHECK(concrete_shape(pairs, {{"N", 3}}) == std::vector<int64_t>{5, 2});
}

TEST_CASE("random inputs are deterministic, non-zero and in range") {
  const Sizes sizes{{"N", 500}};
  HostArray a = input_for(vec("N"), sizes, 42);
  HostArray b = input_for(vec("N"), sizes, 42);
  CHECK(a.data == b.data);
  CHECK(a.shape == std::vector<int64_t>{500});
  for (double v : a.data) {
    CHECK(v != 0.0);
    CHECK(v >= -1.0);
    CHECK(v < 1.0);
    CHECK(static_cast<double>(static_cast<float>(v)) == v);
  }
  std::mt19937_64 rng(5);
  HostArray ints = random_input(array_of(ir::Type::int_(), arith::size_var("N")), sizes, rng);
  CHECK(ints.kind == ir::ScalarKind::Int);
  bool varied = false;
  for (double v : ints.data) {
    CHECK(v >= -100.0);
    CHECK(v <= 100.0);
    CHECK(v == static_cast<double>(static_cast<int64_t>(v)));
    varied = varied || v != ints.data[0];
  }
  CHECK(varied);
}

TEST_CASE("read_input and write_output") {
  const Sizes sizes{{"M", 48}, {"N", 64}};
  const std::string missing = temp_path("does_not_exist.bin");
  std::filesystem::remove(missing);
  CHECK(error_of([&] { read_input(missing, grid("M", "N"), sizes); }) ==
        "error: cannot read " + missing + ": No such file or directory");

  const std::string small = temp_path("small.bin");
  write_floats(small, 1000);
  CHECK(error_of([&] { read_input(small, grid("M", "N"), sizes, "grid"); }) ==
        "error: " + small +
            " has 1000 floats, parameter grid: [[float]N]M needs 3072 (M=48, N=64)");
  CHECK(error_of([&] { read_input(small, grid("M", "N"), sizes); }) ==
        "error: " + small + " has 1000 floats, type [[float]N]M needs 3072 (M=48, N=64)");
  std::filesystem::remove(small);

  // Round trip through a file.
  HostArray values = input_for(grid("M", "N"), sizes, 9);
  const std::string path = temp_path("round_trip.bin");
  write_output(path, values);
  CHECK(std::filesystem::file_size(path) == 3072u * 4u);
  HostArray back = read_input(path, grid("M", "N"), sizes);
  CHECK(back.shape == values.shape);
  CHECK(back.data == values.data);
  std::filesystem::remove(path);
}

TEST_CASE("summaries") {
  HostArray a{ir::ScalarKind::Float, {2, 3}, {0.5, -1.0, 2.0, 0.25, 3.0, -0.75}};
  Summary s = summarize(a);
  CHECK(s.shape == std::vector<int64_t>{2, 3});
  CHECK(s.checksum == 4.0);
  CHECK(s.min == -1.0);
  CHECK(s.max == 3.0);
  CHECK(s.mean == doctest::Approx(4.0 / 6.0));
  HostArray scalar{ir::ScalarKind::Float, {}, {1.5}};
  CHECK(scalar.size() == 1);
  Summary t = summarize(scalar);
  CHECK(t.checksum == 1.5);
  CHECK(t.mean == 1.5);
}

TEST_CASE("an inexact split below an index reports the split") {
  ir::Expr x = ir::param(vec("N"), "x");
  ir::Expr first_chunk = ir::call(ir::at(0), {ir::call(ir::split(4), {x})});
  ir::Program p = program({x}, ir::call(ir::at(1), {first_chunk}));
  CHECK(error_of([&] {
          run(p, {input_for(vec("N"), {{"N", 6}}, 1)}, {{"N", 6}});
        }) == "error: split(4) of an array of length 6: 6 is not a multiple of 4");
  HostArray in = input_for(vec("N"), {{"N", 8}}, 1);
  HostArray out = run(p, {in}, {{"N", 8}});
  CHECK(out.data[0] == in.data[1]);
}
