// Poisson 3D, 19-point (stencils/3d/poisson3d.lift), written by hand: one work-item per output
// point over the centre, the 6 face and the 12 edge neighbours of the 3x3x3 box. grid and out are
// M planes (z) of N rows (y) of O floats (x), x fastest; x = get_global_id(0) runs along a row,
// y = get_global_id(1), z = get_global_id(2). Borders clamp (pad3D(1, 1, clamp)). Launch:
// global >= (O, N, M); work-items outside the grid return.

float poisson(float c, float f, float b, float n, float s, float w, float e, float fn, float fs,
              float fw, float fe, float bn, float bs, float bw, float be, float nw, float ne,
              float sw, float se) {
  return 2.666f * c - 0.166f * (f + b + n + s + w + e) -
         0.0833f * (fn + fs + fw + fe + bn + bs + bw + be + nw + ne + sw + se);
}

kernel void poisson3d_naive(const global float* restrict grid, global float* restrict out, int M,
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
      poisson(AT(1, 1, 1), AT(0, 1, 1), AT(2, 1, 1), AT(1, 0, 1), AT(1, 2, 1), AT(1, 1, 0),
              AT(1, 1, 2), AT(0, 0, 1), AT(0, 2, 1), AT(0, 1, 0), AT(0, 1, 2), AT(2, 0, 1),
              AT(2, 2, 1), AT(2, 1, 0), AT(2, 1, 2), AT(1, 0, 0), AT(1, 0, 2), AT(1, 2, 0),
              AT(1, 2, 2));
#undef AT
}
