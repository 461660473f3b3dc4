// Jacobi 2D 9-point (stencils/jacobi2d9pt.lift), written by hand: one work-item per output point
// over the clamped 3x3 window (pad2D(1, 1, clamp)). grid and out are M rows of N floats,
// row-major; x = get_global_id(0) runs along a row. Launch: global >= (N, M).

float jacobi9(float nw, float n, float ne, float w, float c, float e, float sw, float s,
              float se) {
  return (7.0f * nw + 5.0f * n + 9.0f * ne + 12.0f * w + 15.0f * c + 12.0f * e + 9.0f * sw +
          5.0f * s + 7.0f * se) /
         118.0f;
}

kernel void jacobi2d9pt_naive(const global float* restrict grid, global float* restrict out,
                              int M, int N) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= N || y >= M)
    return;
  const global float* above = grid + max(y - 1, 0) * N;
  const global float* row = grid + y * N;
  const global float* below = grid + min(y + 1, M - 1) * N;
  const int left = max(x - 1, 0);
  const int right = min(x + 1, N - 1);
  out[y * N + x] = jacobi9(above[left], above[x], above[right], row[left], row[x], row[right],
                           below[left], below[x], below[right]);
}
