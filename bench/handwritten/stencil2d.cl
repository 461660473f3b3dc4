// SHOC Stencil2D 9-point (stencils/stencil2d.lift), written by hand: one work-item per output
// point over the clamped 3x3 window (pad2D(1, 1, clamp)), weights centre 0.25, edges 0.15,
// corners 0.05. The weighted sum runs over the window row by row, left to right, from 0 (the order
// of reduce(add, 0.0f, ...)). grid and out are M rows of N floats, row-major;
// x = get_global_id(0) runs along a row. Launch: global >= (N, M).

kernel void stencil2d_naive(const global float* restrict grid, global float* restrict out, int M,
                            int N) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= N || y >= M)
    return;
  const global float* above = grid + max(y - 1, 0) * N;
  const global float* row = grid + y * N;
  const global float* below = grid + min(y + 1, M - 1) * N;
  const int left = max(x - 1, 0);
  const int right = min(x + 1, N - 1);
  const float corner = 0.05f;
  const float edge = 0.15f;
  const float centre = 0.25f;
  float sum = 0.0f;
  sum += corner * above[left];
  sum += edge * above[x];
  sum += corner * above[right];
  sum += edge * row[left];
  sum += centre * row[x];
  sum += edge * row[right];
  sum += corner * below[left];
  sum += edge * below[x];
  sum += corner * below[right];
  out[y * N + x] = sum;
}
