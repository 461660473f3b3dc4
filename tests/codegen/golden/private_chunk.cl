float sq(float x) {
  return x * x;
}

kernel void private_chunk(
    const global float* restrict in,
    global float* out_0,
    int N) {
  {
    int gid0_1 = get_global_id(0);
    float priv_2_0, priv_2_1, priv_2_2, priv_2_3;
    {
      priv_2_0 = sq(in[(4 * gid0_1)]);
    }
    {
      priv_2_1 = sq(in[((4 * gid0_1) + 1)]);
    }
    {
      priv_2_2 = sq(in[((4 * gid0_1) + 2)]);
    }
    {
      priv_2_3 = sq(in[((4 * gid0_1) + 3)]);
    }
    {
      out_0[(4 * gid0_1)] = priv_2_0;
    }
    {
      out_0[((4 * gid0_1) + 1)] = priv_2_1;
    }
    {
      out_0[((4 * gid0_1) + 2)] = priv_2_2;
    }
    {
      out_0[((4 * gid0_1) + 3)] = priv_2_3;
    }
  }
}

// launch: dims 1; global0 N /^ 4, local0 any
// local bytes: 0
// mapGlb0 over N /^ 4: block
// mapSeq over 4: unrolled
// mapSeq over 4: unrolled
