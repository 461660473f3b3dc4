// Gaussian blur 5x5 (stencils/gaussian.lift), written by hand: one work-item per output point over
// the 5x5 window, clamped by two points (pad2D(2, 2, clamp)). The weights are the table the .lift
// program's gaussWeight generates; the weighted sum runs over the window row by row, left to
// right, from 0 (the order of reduce(add, 0.0f, ...)), and is divided by 159 at the end.
// grid and out are M rows of N floats, row-major; x = get_global_id(0) runs along a row.
// Launch: global >= (N, M).

constant float gauss_weights[25] = {2.0f, 4.0f,  5.0f,  4.0f,  2.0f,  //
                                    4.0f, 9.0f,  12.0f, 9.0f,  4.0f,  //
                                    5.0f, 12.0f, 15.0f, 12.0f, 5.0f,  //
                                    4.0f, 9.0f,  12.0f, 9.0f,  4.0f,  //
                                    2.0f, 4.0f,  5.0f,  4.0f,  2.0f};

kernel void gaussian_naive(const global float* restrict grid, global float* restrict out, int M,
                           int N) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= N || y >= M)
    return;
  float sum = 0.0f;
#pragma unroll
  for (int dy = 0; dy < 5; ++dy) {
    const global float* row = grid + clamp(y + dy - 2, 0, M - 1) * N;
#pragma unroll
    for (int dx = 0; dx < 5; ++dx)
      sum += gauss_weights[dy * 5 + dx] * row[clamp(x + dx - 2, 0, N - 1)];
  }
  out[y * N + x] = sum / 159.0f;
}
