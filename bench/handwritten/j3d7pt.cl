// Jacobi 3D 7-point (stencils/3d/j3d7pt.lift), written by hand: one work-item per output point.
// grid and out are M planes (z) of N rows (y) of O floats (x), x fastest; x = get_global_id(0)
// runs along a row so that neighbouring work-items touch neighbouring addresses, y =
// get_global_id(1), z = get_global_id(2). Borders clamp: a neighbour outside the grid reads the
// nearest in-range point (pad3D(1, 1, clamp)). Launch: global >= (O, N, M); work-items outside
// the grid return.

float jacobi7(float c, float f, float b, float n, float s, float w, float e) {
  return 0.161f * e + 0.162f * w + 0.163f * s + 0.164f * n + 0.165f * b + 0.166f * f - 1.67f * c;
}

kernel void j3d7pt_naive(const global float* restrict grid, global float* restrict out, int M,
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
      jacobi7(AT(1, 1, 1), AT(0, 1, 1), AT(2, 1, 1), AT(1, 0, 1), AT(1, 2, 1), AT(1, 1, 0),
              AT(1, 1, 2));
#undef AT
}
