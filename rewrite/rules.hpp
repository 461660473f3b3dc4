#pragma once
/// The rule set. Each factory returns one named rule; parametrised rules take their numbers.
/// Every rule is semantics-preserving: its tests run the interpreter before and after on random
/// inputs. `x` is the site's argument; `f`, `g` functions; lengths come from the types.
#include "rewrite/rule.hpp"

namespace liftx::rewrite {

// ---- algorithmic (rewrite/rules/algorithmic.cpp) -----------------------------------------------
/// split-join(n):   map(f, x) => join(map(map(f), split(n, x)))
/// Refuses non-maps and constant lengths that n does not divide.
Rule split_join(int64_t n);
/// map-fusion:      map(f, map(g, x)) => map(y => f(g(y)), x)     (also mapSeq over mapSeq)
Rule map_fusion();
/// map-fission:     map(y => f(e), x) => map(f, map(y => e, x))   when the body is a call of a
///                  function f (not using y) on one argument e that uses y
Rule map_fission();
/// map-map-interchange: map(map(f), x) => transpose(map(map(f), transpose(x)))
Rule map_map_interchange();
/// moving-join:     map(f, join(x)) => join(map(map(f), x))
Rule moving_join();
/// slide-tiling(u): slide(n, s, x) => join(map(slide(n, s), slide(u + n - s, u, x)))
/// Overlapped 1D tiles of u windows; refuses when s does not divide u.
Rule slide_tiling(int64_t u);
/// tile-stencil-1d(u): map(f, slide(n, s, x)) => join(map(t => map(f, slide(n, s, t)),
///                                                        slide(u + n - s, u, x)))
Rule tile_stencil_1d(int64_t u);
/// tile-stencil-2d(ux, uy): a 2D stencil over overlapped tiles of uy rows by ux columns of windows:
///   map(map(f), slide2D(n, s, x))
///   => map(join, join(map(transpose,
///        map(map(t => map(map(f), slide2D(n, s, t))),
///            map(transpose, slide(uy + n - s, uy, map(slide(ux + n - s, ux), x)))))))
/// slide2D is recognised in its expanded form (ir/derived.hpp). Refuses when s does not divide
/// ux or uy.
Rule tile_stencil_2d(int64_t ux, int64_t uy);
/// tile-stencil-2d-zip(ux, uy): the same for stencils that zip a slid grid with point-wise grids,
///   map(map(f), zip2D(slide2D(n, s, a), b, c, ...))
/// Every slid grid gets overlapping tiles, the point-wise grids non-overlapping tiles of uy x ux;
/// the work lambda receives (tile_a, tile_b, ...) and maps f over zip2D(slide2D(n, s, tile_a),
/// tile_b, ...).
Rule tile_stencil_2d_zip(int64_t ux, int64_t uy);
/// tile-stencil-3d(ux, uy, uz): a 3D stencil over overlapped tiles of uz x uy x ux windows:
///   map3D(f, slide3D(n, s, x))
///   => untile3D(map3D(t => map3D(f, slide3D(n, s, t)),
///                     slide3D((uz + n - s, uz), (uy + n - s, uy), (ux + n - s, ux), x)))
/// untile3D reassembles the tiles with maps of transpose and join (writes go straight to the
/// output). slide3D is recognised in its expanded form with one window and step for every
/// dimension. Refuses when s does not divide a tile size.
Rule tile_stencil_3d(int64_t ux, int64_t uy, int64_t uz);
/// zip-of-maps:     zipKD(mapKD(f1, x1), ..., mapKD(fn, xn))
///                  => mapKD(p => tuple(f1(get(1, p)), ..., fn(get(n, p))), zipKD(x1, ..., xn))
/// for K = 1, 2, 3 (zip2D/zip3D and map2D/map3D in their expanded forms): several results per
/// point computed in one map nest (one pass over the inputs) instead of one nest each. Maps over
/// equal arrays share one input (no zip at all when every xi is the same). Refuses when some
/// zipped array is not a K-dimensional map, or a map that only rearranges data (slide2D's
/// map(transpose) is a view, not a computation).
Rule zip_of_maps();

// ---- temporal blocking (rewrite/rules/temporal.cpp, rewrite/temporal.hpp) ---------------------
/// unroll-iterate(t): iterate(T, f, x) => iterate(T / t, y => f(...f(y)), x)   (t applications),
/// inside iterate(T mod t, f, ...) when t does not divide T (the steps left over, unfused).
/// Refuses counts that are not constants or below t.
Rule unroll_iterate(int64_t t);
/// pad-of-map:      pad(l, r, b, map(f, x)) => map(f, pad(l, r, b, x))
/// An index-remapping pad (clamp, mirror, wrap) of computed points is the computation at the
/// remapped points. Refuses a constant boundary (f of the constant is not the constant).
Rule pad_of_map();
/// hoist-wrap-padding: pad2D(a, wrap, map2D(f, slide2D(n, 1, pad2D(b, wrap, x))))
///                     => map2D(f, slide2D(n, 1, pad2D(a + b, wrap, x)))
/// A periodic grid's stencil step commutes with the periodic extension, so the padding of every
/// fused step moves to the input. Refuses other boundaries, steps other than 1 and stencils that
/// change the grid's shape.
Rule hoist_wrap_padding();
/// re-clamp-tile-edges: slide(t + l + r, t, pad(l, r, b, x))
///   => map((w, e) => pick(e, w, pad(l, 0, b, w[l..]), pad(0, r, b, w[..-r]), pad(l, r, b,
///          w[l..-r])), zip(slide(t + l + r, t, pad(l, r, b, x)), array(n, tileEdge)))
/// Re-padding the overlapped tiles of a clamp-, mirror- or constant-padded array at the array's
/// edges changes nothing: a tile touching the first (last) edge holds the array's first (last)
/// element at index l (t + l - 1), and its halo beyond the edge is the boundary's padding of its
/// inner elements (their remapping, or the constant). So a fused step may compute a tile's halo
/// beyond the grid from anything and re-pad it (tileEdge(i, n): 1 the first tile, 2 the last, 3
/// both, 0 neither). Refuses wrap (whose halo is the other edge's points),
/// tiles whose halo is not the padding, non-scalar elements, and mirrored halos wider than the
/// tile.
Rule reclamp_tile_edges();

// ---- reductions (rewrite/rules/reduction.cpp, rewrite/reduction.hpp) ---------------------------
/// split-reduce(k): reduce(f, init, x)
///                  => reduce(f, init, join(map(reduce(f, init), transpose(split(k, x)))))
/// k partial reductions of interleaved elements (part l: x[l], x[l + k], ...), combined. Refuses
/// an f not known to be associative and commutative (built-in add and mult), an init that is not
/// its identity, and constant lengths that k does not divide.
Rule split_reduce(int64_t k);
/// reduce-map-fusion: reduce(f, init, map(g, x)) => reduce((a, e) => f(a, g(e)), init, x)
Rule reduce_map_fusion();
/// long-reduce-map-fusion: reduce-map-fusion where the length of x is not a constant. Unfused,
/// every such reduction would first store its map in a temporary of that length, in global
/// memory (private memory needs a constant size): M·N·K floats for a matrix product, which
/// overflow int indices at 4096³. The space applies it before lowering; a constant length (a
/// stencil's window of products, kept in registers) is refused.
Rule long_reduce_map_fusion();

// ---- simplification (rewrite/rules/simplification.cpp)
// -------------------------------------------
/// transpose-transpose: transpose(transpose(x)) => x
Rule transpose_transpose_id();
/// join-split:      join(split(n, x)) => x
Rule join_split_id();
/// split-join-id:   split(n, join(x)) => x      when the rows of x have length n
Rule split_join_id();

// ---- OpenCL lowering (rewrite/rules/opencl.cpp) -------------------------------------------------
/// map-to-mapGlb(d): map(f) => mapGlb(d)(f); refuses inside mapGlb(d)/mapWrg/mapLcl, and when
/// f does not compute (pure layout maps stay maps).
Rule map_to_glb(int dim);
/// map-to-mapWrg(d): map(f) => mapWrg(d)(f); refuses inside any mapGlb/mapLcl or mapWrg(d).
Rule map_to_wrg(int dim);
/// map-to-mapLcl(d): map(f) => mapLcl(d)(f); only inside mapWrg(d), not inside mapLcl(d).
Rule map_to_lcl(int dim);
/// map-to-mapSeq:   map(f) => mapSeq(f) when f computes.
Rule map_to_seq();
/// reduce-to-reduceSeq: reduce(f, init) => reduceSeq(f, init)
Rule reduce_to_seq();
/// chunk-outputs(n): mapGlb(d)(f, x) => join(mapGlb(d)(mapSeq(f), split(n, x)))
/// n outputs per work-item (sequential inside the thread).
Rule chunk_outputs(int64_t n);
/// copy-to-local:   inside a mapWrg, g(..., x, ...) where x is an array parameter of the
/// work-group's lambda => g(..., toLocal(mapLcl(k-1)(...mapLcl0(id)))(x), ...), one mapLcl per
/// dimension of x (up to 3), outermost in the highest dimension. Refuses outside mapWrg or when
/// x is already copied.
Rule copy_to_local();
/// copy-to-private: inside a parallel map, g(x) where x is a small constant-size array =>
/// g(toPrivate(mapSeq(id))(x)) (nested mapSeq for 2D)
Rule copy_to_private();
/// pad-local-rows(p): toLocal(f)(x) => toLocalPadded(p, f)(x) when the local array has at least
/// two dimensions of scalars: every innermost row is followed by p unused elements, so that a
/// warp reading down a column (or across rows) meets other banks (seed 004, Algorithm 2 chooses
/// p: rewrite::bank_padding). Refuses anything else; p >= 1, else UserError.
Rule pad_local_rows(int64_t padding);

// ---- registers and vectors (rewrite/rules/vector.cpp) -------------------------------------------
/// slide-window-1d: map(f, slide(n, s, x)) => mapSeqSlide(f, n, s, x)   (also mapSeq): the
/// window is kept in registers, each step loads s new elements.
Rule slide_window_1d();
/// slide-window-3d: a 3D stencil as a register window of planes marching along z (the 2.5D
/// scheme's register form): map3D(f, slide3D(n, s, x)) => mapSeqSlide(planes => map2D(f,
/// neighbourhoods of the n planes), n, s, x). The planes must have constant sizes (a tile).
Rule slide_window_3d();
/// slide-window-2d: a 2D stencil as a register window sliding down the rows (Lift's
/// mapSeqSlide2D):
///   map(map(f), slide2D(n, s, x)) => mapSeqSlide(rows => map(f, transpose(map(slide(n, s),
///   rows))), n, s, x)
Rule slide_window_2d();
/// slide-window-2d-zip: the same for stencils zipping a slid grid with point-wise grids (step 1);
/// the point-wise rows travel in the window padded by n-1 rows in front, read at slot n-1:
///   map(map(f), zip2D(slide2D(n, 1, a), b)) => mapSeqSlide(w => map(f, zip(transpose(map(
///   slide(n, 1), map(get(0), w))), get(1, w[n-1]))), n, 1, zip(a, pad(n-1, 0, clamp, b)))
Rule slide_window_2d_zip();
/// vectorise-outputs(w): mapSeq(f, x) => asScalar(mapSeq(id, asVector(w, toPrivate(mapSeq(f))(x))))
/// a thread's consecutive scalar outputs (a constant number, a multiple of w) stored as vectors.
Rule vectorise_outputs(int width);
/// vectorise-copy(w): mapSeq(id, x) => asScalar(mapSeq(id, asVector(w, x)))
Rule vectorise_copy(int width);
/// vectorize-map(w) (Lift's vectorize): map(uf, x) => asScalar(map(vectorize(w, uf),
/// asVector(w, x))), x an array of scalars or a zip of them (each asVector'd).
Rule vectorize_map(int width);

/// All rules, for listing and for the engine's labels (parametrised rules with a representative
/// parameter).
std::vector<Rule> all_rules();

} // namespace liftx::rewrite
