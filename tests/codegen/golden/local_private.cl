float inc(float x) {
  return x + 1.0f;
}

kernel void local_private(
    const global float* restrict in,
    global float* out_0,
    int N) {
  {
    int wg0_1 = get_group_id(0);
    {
      int lid0_2 = get_local_id(0);
      out_0[(lid0_2 + (32 * wg0_1))] = inc(in[(lid0_2 + (32 * wg0_1))]);
    }
  }
}

// launch: dims 1; global0 N, local0 32
// local bytes: 0
// mapWrg0 over N /^ 32: block
// mapLcl0 over 32: block
