// Jacobi 3D 27-point (stencils/3d/j3d27pt.lift), written by hand: one work-item per output point
// over the weighted 3x3x3 box. grid and out are M planes (z) of N rows (y) of O floats (x), x
// fastest; x = get_global_id(0) runs along a row, y = get_global_id(1), z = get_global_id(2).
// Borders clamp (pad3D(1, 1, clamp)). Launch: global >= (O, N, M); work-items outside the grid
// return.

float jacobi27(float fnw, float fn, float fne, float fw, float f, float fe, float fsw, float fs,
               float fse, float nw, float n, float ne, float w, float c, float e, float sw,
               float s, float se, float bnw, float bn, float bne, float bw, float b, float be,
               float bsw, float bs, float bse) {
  return (0.5f * fnw + 0.7f * fn + 0.9f * fne + 1.2f * fw + 1.5f * f + 1.2f * fe + 0.9f * fsw +
          0.7f * fs + 0.5f * fse + 0.51f * nw + 0.71f * n + 0.91f * ne + 1.21f * w + 1.51f * c +
          1.21f * e + 0.91f * sw + 0.71f * s + 0.51f * se + 0.52f * bnw + 0.72f * bn +
          0.92f * bne + 1.22f * bw + 1.52f * b + 1.22f * be + 0.92f * bsw + 0.72f * bs +
          0.52f * bse) /
         159.0f;
}

kernel void j3d27pt_naive(const global float* restrict grid, global float* restrict out, int M,
                          int N, int O) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  const int z = get_global_id(2);
  if (x >= O || y >= N || z >= M)
    return;
  // The padded window's indices along each axis: AT(i, j, k) is the .lift program's nbh[i][j][k].
  const int zs[3] = {max(z - 1, 0), z, min(z + 1, M - 1)};
  const int ys[3] = {max(y - 1, 0), y, min(y + 1, N - 1)};
  const int xs[3] = {max(x - 1, 0), x, min(x + 1, O - 1)};
#define AT(i, j, k) grid[(zs[i] * N + ys[j]) * O + xs[k]]
  out[(z * N + y) * O + x] =
      jacobi27(AT(0, 0, 0), AT(0, 0, 1), AT(0, 0, 2), AT(0, 1, 0), AT(0, 1, 1), AT(0, 1, 2),
               AT(0, 2, 0), AT(0, 2, 1), AT(0, 2, 2), AT(1, 0, 0), AT(1, 0, 1), AT(1, 0, 2),
               AT(1, 1, 0), AT(1, 1, 1), AT(1, 1, 2), AT(1, 2, 0), AT(1, 2, 1), AT(1, 2, 2),
               AT(2, 0, 0), AT(2, 0, 1), AT(2, 0, 2), AT(2, 1, 0), AT(2, 1, 1), AT(2, 1, 2),
               AT(2, 2, 0), AT(2, 2, 1), AT(2, 2, 2));
#undef AT
}
