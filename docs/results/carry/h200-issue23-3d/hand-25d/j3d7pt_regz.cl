// Two steps of Jacobi 3D 7-point (clamp), AN5D-like 2.5D: a work-group of BX x BY threads covers
// a BY x BX input region (outputs: its interior less 2 on each side) and ZC planes; each thread
// keeps its column's z-neighbours in registers, the xy plane goes through local memory.
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 32
#endif
#ifndef ZC
#define ZC 64
#endif
#ifndef PREFETCH
#define PREFETCH 1
#endif
#define TX (BX - 4)
#define TY (BY - 4)

inline int clampi(int v, int hi) { return min(max(v, 0), hi); }
inline float j7(float c, float f, float b, float n, float s, float w, float e) {
  return 0.161f * e + 0.162f * w + 0.163f * s + 0.164f * n + 0.165f * b + 0.166f * f - 1.67f * c;
}

__kernel __attribute__((reqd_work_group_size(BX, BY, 1))) void
j3d7pt_regz(__global const float* restrict in, __global float* restrict out, int M, int N, int O) {
  __local float pin[BY * BX];
  __local float ps1[BY * BX];
  const int lx = get_local_id(0), ly = get_local_id(1);
  const int x0 = get_group_id(0) * TX - 2, y0 = get_group_id(1) * TY - 2;
  const int gx = x0 + lx, gy = y0 + ly;
  const int zb = get_group_id(2) * ZC, ze = min(zb + ZC, M);
  // Local offsets of the clamped neighbours (constant along z): a point beyond the grid's edge
  // holds the value of its clamped point, so neighbours read clamped coordinates.
  const int cy = clampi(gy, N - 1), cx = clampi(gx, O - 1);
  const int me = ly * BX + lx;
  const int ln = (clampi(cy - 1, N - 1) - y0) * BX + lx, ls = (clampi(cy + 1, N - 1) - y0) * BX + lx;
  const int lw = ly * BX + clampi(cx - 1, O - 1) - x0, le = ly * BX + clampi(cx + 1, O - 1) - x0;
  const bool s1_here = lx >= 1 && lx < BX - 1 && ly >= 1 && ly < BY - 1;
  const bool out_here = lx >= 2 && lx < BX - 2 && ly >= 2 && ly < BY - 2 && gx < O && gy < N;
  // Out-of-grid threads' own first-step values are never read: every xy neighbour is read at its
  // clamped point, and z-neighbours are the thread's own.
  const size_t col = (size_t)cy * O + cx;
  const size_t plane = (size_t)N * O;
  const int qs = max(zb - 1, 0), qe = min(ze, M - 1);
  float ip = in[clampi(qs - 1, M - 1) * plane + col];
  float ic = in[qs * plane + col];
  float sp = 0.0f, sc = 0.0f;
  // One plane loaded ahead (PREFETCH): the load of plane q + 2 is in flight while plane q computes.
  float ahead = in[clampi(qs + 1, M - 1) * plane + col];
  for (int q = qs; q <= qe; ++q) {
    const float inx = ahead;
#if PREFETCH
    ahead = in[clampi(q + 2, M - 1) * plane + col];
#else
    ahead = 0.0f;
#endif
    pin[me] = ic;
    ps1[me] = sc;
    barrier(CLK_LOCAL_MEM_FENCE);
    const float sn = s1_here ? j7(ic, ip, inx, pin[ln], pin[ls], pin[lw], pin[le]) : 0.0f;
    const int z = q - 1;
    if (z >= zb && out_here)
      out[z * plane + col] = j7(sc, z == 0 ? sc : sp, sn, ps1[ln], ps1[ls], ps1[lw], ps1[le]);
    barrier(CLK_LOCAL_MEM_FENCE);
    sp = sc;
    sc = sn;
    ip = ic;
    ic = inx;
#if !PREFETCH
    ahead = in[clampi(q + 2, M - 1) * plane + col];
#endif
  }
  if (ze == M) {
    ps1[me] = sc;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (out_here)
      out[(M - 1) * plane + col] = j7(sc, M == 1 ? sc : sp, sc, ps1[ln], ps1[ls], ps1[lw], ps1[le]);
  }
}
