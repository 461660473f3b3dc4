#pragma once
// The four example programs of docs/language.md, as written there.
namespace liftx::parse::test {

inline constexpr const char* kStencil1d = R"(// paper Listing 1: 1D 3-point stencil
def stencil1d(arg: [float]N) =
  join(map(reduce(add, 0.0f), slide(3, 1, pad(1, 1, constant(0.0f), arg))))
)";

inline constexpr const char* kTiled1d = R"(// paper Listing 2: the same with overlapped tiling
def tiled1d(arg: [float]N) =
  join(mapWrg0(tile =>
      join(mapLcl0(toGlobal(reduceSeq(add, 0.0f)), slide(3, 1, toLocal(mapLcl0(id, tile))))),
    slide(18, 16, pad(1, 1, constant(0.0f), arg))))
)";

inline constexpr const char* kChunks = R"(userfun times2(x: float): float { return x * 2.0f; }
def chunks(in: [float]N) = join(mapGlb0(mapSeq(times2), split(4, in)))
)";

inline constexpr const char* kJacobi2d5pt =
    R"(userfun jacobi5(c: float, n: float, s: float, e: float, w: float): float {
  return 0.2f * (c + n + s + e + w);
}
def jacobi2d5pt(grid: [[float]N]M) =
  map2D(nbh => jacobi5(nbh[1][1], nbh[0][1], nbh[2][1], nbh[1][2], nbh[1][0]),
        slide2D(3, 1, pad2D(1, 1, clamp, grid)))
)";

} // namespace liftx::parse::test
