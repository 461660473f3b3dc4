float add(float x, float y) {
  return x + y;
}

kernel void interior(
    const global float* restrict x,
    global float* out_0,
    int N) {
  {
    int gid0_1 = get_global_id(0);
    float acc_2 = 0.0f;
    {
      acc_2 = add(acc_2, x[gid0_1]);
    }
    {
      acc_2 = add(acc_2, x[(gid0_1 + 1)]);
    }
    {
      acc_2 = add(acc_2, x[(gid0_1 + 2)]);
    }
    out_0[gid0_1] = acc_2;
  }
}

// launch: dims 1; global0 N - 2, local0 any
// local bytes: 0
// mapGlb0 over N - 2: block
// reduceSeq over 3: unrolled
