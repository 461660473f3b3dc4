float times2(float x) {
  return x * 2.0f;
}

kernel void chunks(
    const global float* restrict in,
    global float* out_0,
    int N) {
  {
    int gid0_1 = get_global_id(0);
    for (int i_2 = 0; i_2 < 4; i_2 += 1) {
      out_0[((4 * gid0_1) + i_2)] = times2(in[((4 * gid0_1) + i_2)]);
    }
  }
}

// launch: dims 1; global0 N /^ 4, local0 any
// local bytes: 0
// mapGlb0 over N /^ 4: block
// mapSeq over 4: for
