// Jacobi 3D 13-point (stencils/3d/j3d13pt.lift), written by hand: one work-item per output point
// over the radius-2 star. grid and out are M planes (z) of N rows (y) of O floats (x), x fastest;
// x = get_global_id(0) runs along a row, y = get_global_id(1), z = get_global_id(2). Borders
// mirror by two points (pad3D(2, 2, mirror)): the reflection that repeats the edge element,
// numpy's 'symmetric' (-1 reads 0, -2 reads 1, n reads n - 1, n + 1 reads n - 2). Launch:
// global >= (O, N, M); work-items outside the grid return.

float jacobi13(float c, float ff, float f, float b, float bb, float nn, float n, float s, float ss,
               float ww, float w, float e, float ee) {
  return 0.083f * ee + 0.083f * e + 0.083f * w + 0.083f * ww + 0.083f * ss + 0.083f * s +
         0.083f * n + 0.083f * nn + 0.083f * bb + 0.083f * b + 0.083f * f + 0.083f * ff -
         0.996f * c;
}

// The mirrored index of i, as the interpreter computes it: in-range indices are themselves; the
// others reflect about the edges with period 2n, so that grids narrower than the padding are
// right too.
int mirror(int i, int n) {
  if (i >= 0 && i < n)
    return i;
  int m = i < 0 ? -1 - i : i;
  m %= 2 * n;
  return m >= n ? 2 * n - 1 - m : m;
}

kernel void j3d13pt_naive(const global float* restrict grid, global float* restrict out, int M,
                          int N, int O) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  const int z = get_global_id(2);
  if (x >= O || y >= N || z >= M)
    return;
  // The padded window's indices along each axis: AT(i, j, k) is the .lift program's nbh[i][j][k].
  const int zs[5] = {mirror(z - 2, M), mirror(z - 1, M), z, mirror(z + 1, M), mirror(z + 2, M)};
  const int ys[5] = {mirror(y - 2, N), mirror(y - 1, N), y, mirror(y + 1, N), mirror(y + 2, N)};
  const int xs[5] = {mirror(x - 2, O), mirror(x - 1, O), x, mirror(x + 1, O), mirror(x + 2, O)};
#define AT(i, j, k) grid[(zs[i] * N + ys[j]) * O + xs[k]]
  out[(z * N + y) * O + x] =
      jacobi13(AT(2, 2, 2), AT(0, 2, 2), AT(1, 2, 2), AT(3, 2, 2), AT(4, 2, 2), AT(2, 0, 2),
               AT(2, 1, 2), AT(2, 3, 2), AT(2, 4, 2), AT(2, 2, 0), AT(2, 2, 1), AT(2, 2, 3),
               AT(2, 2, 4));
#undef AT
}
