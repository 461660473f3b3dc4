float avg3(float a, float b, float c) {
  return (a + b + c) / 3.0f;
}

kernel void clamp2d(
    const global float* restrict grid,
    global float* out_0,
    int M,
    int N) {
  {
    int gid1_1 = get_global_id(1);
    {
      int gid0_2 = get_global_id(0);
      out_0[((N * gid1_1) + gid0_2)] = avg3(grid[((N * max((gid1_1 - 1), 0)) + gid0_2)], grid[((N * gid1_1) + gid0_2)], grid[((N * min((M - 1), (gid1_1 + 1))) + gid0_2)]);
    }
  }
}

// launch: dims 2; global0 N, local0 any; global1 M, local1 any
// local bytes: 0
// mapGlb1 over M: block
// mapGlb0 over N: block
