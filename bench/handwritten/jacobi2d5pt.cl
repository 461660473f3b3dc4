// Jacobi 2D 5-point (stencils/jacobi2d5pt.lift), written by hand: one work-item per output point.
// grid and out are M rows of N floats, row-major; x = get_global_id(0) runs along a row so that
// neighbouring work-items touch neighbouring addresses. Borders clamp: a neighbour outside the
// grid reads the nearest in-range point (pad2D(1, 1, clamp)).
// Launch: global >= (N, M); work-items outside the grid return.

float jacobi5(float c, float n, float s, float e, float w) {
  return (5.0f * n + 12.0f * w + 15.0f * c + 5.0f * s + 12.0f * e) / 118.0f;
}

kernel void jacobi2d5pt_naive(const global float* restrict grid, global float* restrict out,
                              int M, int N) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= N || y >= M)
    return;
  const int up = max(y - 1, 0);
  const int down = min(y + 1, M - 1);
  const int left = max(x - 1, 0);
  const int right = min(x + 1, N - 1);
  out[y * N + x] = jacobi5(grid[y * N + x], grid[up * N + x], grid[down * N + x],
                           grid[y * N + right], grid[y * N + left]);
}
