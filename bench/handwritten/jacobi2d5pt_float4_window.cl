// Jacobi 2D 5-point (stencils/jacobi2d5pt.lift), written by hand the way that is fast on a GPU:
// each work-item computes 4 x-consecutive outputs with float4 loads and stores (vload4/vstore4)
// in ROWS consecutive rows, sliding a window of three float4 rows down the grid in registers, so
// every row it reads is loaded once (plus the two scalars left and right of the centre row).
// Borders clamp (pad2D(1, 1, clamp)): rows by clamping the row index, columns by clamping the
// column of the left and right scalars; a last group of fewer than 4 columns (N not a multiple of
// 4) is computed point by point. The arithmetic is jacobi5's, lane by lane.
// grid and out are M rows of N floats, row-major. Build with -DROWS=R (default 4).
// Launch: global >= (ceil(N / 4), ceil(M / ROWS)); work-items outside the grid return.

#ifndef ROWS
#define ROWS 4
#endif

float jacobi5(float c, float n, float s, float e, float w) {
  return (5.0f * n + 12.0f * w + 15.0f * c + 5.0f * s + 12.0f * e) / 118.0f;
}

float4 jacobi5_4(float4 c, float4 n, float4 s, float4 e, float4 w) {
  return (5.0f * n + 12.0f * w + 15.0f * c + 5.0f * s + 12.0f * e) / 118.0f;
}

kernel void jacobi2d5pt_float4_window(const global float* restrict grid,
                                      global float* restrict out, int M, int N) {
  const int x0 = 4 * get_global_id(0);
  const int y0 = ROWS * get_global_id(1);
  if (x0 >= N || y0 >= M)
    return;

  if (x0 + 4 > N) {
    // The last, partial group of columns: one point at a time.
    for (int y = y0; y < min(y0 + ROWS, M); ++y) {
      const int up = max(y - 1, 0);
      const int down = min(y + 1, M - 1);
      for (int x = x0; x < N; ++x)
        out[y * N + x] = jacobi5(grid[y * N + x], grid[up * N + x], grid[down * N + x],
                                 grid[y * N + min(x + 1, N - 1)], grid[y * N + max(x - 1, 0)]);
    }
    return;
  }

  const int left = max(x0 - 1, 0);
  const int right = min(x0 + 4, N - 1);
  float4 above = vload4(0, grid + max(y0 - 1, 0) * N + x0);
  float4 centre = vload4(0, grid + y0 * N + x0);
  if (y0 + ROWS <= M) {
    // A whole window of rows. Not unrolled: on an NVIDIA H200 (8192^2) the unrolled loop, which
    // issues the loads of every row of the window at once, reached 59-71% of the float4 copy
    // with 2-8 rows against 81-86% for this loop, row after row.
#pragma unroll 1
    for (int r = 0; r < ROWS; ++r) {
      const int y = y0 + r;
      const float4 below = vload4(0, grid + min(y + 1, M - 1) * N + x0);
      const float4 west = (float4)(grid[y * N + left], centre.s012);
      const float4 east = (float4)(centre.s123, grid[y * N + right]);
      vstore4(jacobi5_4(centre, above, below, east, west), 0, out + y * N + x0);
      above = centre;
      centre = below;
    }
    return;
  }
  // The last, partial window of rows.
  for (int y = y0; y < M; ++y) {
    const float4 below = vload4(0, grid + min(y + 1, M - 1) * N + x0);
    const float4 west = (float4)(grid[y * N + left], centre.s012);
    const float4 east = (float4)(centre.s123, grid[y * N + right]);
    vstore4(jacobi5_4(centre, above, below, east, west), 0, out + y * N + x0);
    above = centre;
    centre = below;
  }
}
