float add(float x, float y) {
  return x + y;
}

kernel void tiled1d(
    const global float* restrict arg,
    global float* out_0,
    local float* lcl_2,
    int N) {
  {
    int wg0_1 = get_group_id(0);
    {
      int lid0_3 = get_local_id(0);
      lcl_2[lid0_3] = ((0 <= (lid0_3 + (16 * wg0_1) - 1) && (lid0_3 + (16 * wg0_1) - 1) < N) ? arg[(lid0_3 + (16 * wg0_1) - 1)] : 0.0f);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) < 16) {
      int lid0_4 = get_local_id(0);
      float acc_5 = 0.0f;
      {
        acc_5 = add(acc_5, lcl_2[lid0_4]);
      }
      {
        acc_5 = add(acc_5, lcl_2[(lid0_4 + 1)]);
      }
      {
        acc_5 = add(acc_5, lcl_2[(lid0_4 + 2)]);
      }
      out_0[(lid0_4 + (16 * wg0_1))] = acc_5;
    }
  }
}

// launch: dims 1; global0 9*N /^ 8, local0 18
// local bytes: 72
// mapWrg0 over N /^ 16: block
// mapLcl0 over 18: block
// mapLcl0 over 16: if
// reduceSeq over 3: unrolled
