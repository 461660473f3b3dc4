// Gradient (stencils/gradient.lift), written by hand: one work-item per output point over the
// clamped 5-point star (pad2D(1, 1, clamp)). grid and out are M rows of N floats, row-major;
// x = get_global_id(0) runs along a row. Launch: global >= (N, M).

float grad(float c, float n, float s, float e, float w) {
  float dn = c - n;
  float ds = c - s;
  float de = c - e;
  float dw = c - w;
  return c + 1.0f / sqrt(0.0001f + dn * dn + ds * ds + de * de + dw * dw);
}

kernel void gradient_naive(const global float* restrict grid, global float* restrict out, int M,
                           int N) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= N || y >= M)
    return;
  const int up = max(y - 1, 0);
  const int down = min(y + 1, M - 1);
  const int left = max(x - 1, 0);
  const int right = min(x + 1, N - 1);
  out[y * N + x] = grad(grid[y * N + x], grid[up * N + x], grid[down * N + x],
                        grid[y * N + right], grid[y * N + left]);
}
