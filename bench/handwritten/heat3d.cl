// Heat equation 3D, 7-point (stencils/3d/heat3d.lift), written by hand: one work-item per output
// point. grid and out are M planes (z) of N rows (y) of O floats (x), x fastest; x =
// get_global_id(0) runs along a row, y = get_global_id(1), z = get_global_id(2). The domain is
// periodic in every dimension (pad3D(1, 1, wrap)). Launch: global >= (O, N, M); work-items outside
// the grid return.

float heat(float c, float f, float b, float n, float s, float w, float e) {
  return 0.125f * (f - 2.0f * c + b) + 0.125f * (n - 2.0f * c + s) + 0.125f * (w - 2.0f * c + e) +
         c;
}

// The periodic index of i in [-1, n] (a padding of one point): -1 reads n - 1, n reads 0.
int wrap(int i, int n) {
  return i < 0 ? i + n : (i >= n ? i - n : i);
}

kernel void heat3d_naive(const global float* restrict grid, global float* restrict out, int M,
                         int N, int O) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  const int z = get_global_id(2);
  if (x >= O || y >= N || z >= M)
    return;
  // The padded window's indices along each axis: AT(i, j, k) is the .lift program's nbh[i][j][k].
  const int zs[3] = {wrap(z - 1, M), z, wrap(z + 1, M)};
  const int ys[3] = {wrap(y - 1, N), y, wrap(y + 1, N)};
  const int xs[3] = {wrap(x - 1, O), x, wrap(x + 1, O)};
#define AT(i, j, k) grid[(zs[i] * N + ys[j]) * O + xs[k]]
  out[(z * N + y) * O + x] = heat(AT(1, 1, 1), AT(0, 1, 1), AT(2, 1, 1), AT(1, 0, 1), AT(1, 2, 1),
                                  AT(1, 1, 0), AT(1, 1, 2));
#undef AT
}
