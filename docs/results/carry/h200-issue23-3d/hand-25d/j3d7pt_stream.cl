// Two steps of Jacobi 3D 7-point (clamp), 2.5D: a work-group per TY x TX column of outputs and ZC
// planes, marching along z; the first step's planes in a ring of three local planes; with STAGE
// the input planes too.
#ifndef TX
#define TX 32
#endif
#ifndef TY
#define TY 16
#endif
#ifndef BX
#define BX 32
#endif
#ifndef BY
#define BY 8
#endif
#ifndef ZC
#define ZC 128
#endif
#ifndef STAGE
#define STAGE 1
#endif
#define SX (TX + 2)
#define SY (TY + 2)
#define IX (TX + 4)
#define IY (TY + 4)
#define NT (BX * BY)

inline int clampi(int v, int hi) { return min(max(v, 0), hi); }
inline float j7(float c, float f, float b, float n, float s, float w, float e) {
  return 0.161f * e + 0.162f * w + 0.163f * s + 0.164f * n + 0.165f * b + 0.166f * f - 1.67f * c;
}

__kernel __attribute__((reqd_work_group_size(BX, BY, 1))) void
j3d7pt_stream(__global const float* restrict in, __global float* restrict out, int M, int N, int O) {
  __local float s1buf[3 * SY * SX];
  const int x0 = get_group_id(0) * TX, y0 = get_group_id(1) * TY;
  const int zb = get_group_id(2) * ZC, ze = min(zb + ZC, M);
  const int tid = get_local_id(1) * BX + get_local_id(0);
  __local float* sp = s1buf;
  __local float* sc = s1buf + SY * SX;
  __local float* sn = s1buf + 2 * SY * SX;
  const int qs = max(zb - 1, 0), qe = min(ze, M - 1);
#if STAGE
  __local float inbuf[3 * IY * IX];
  __local float* ip = inbuf;
  __local float* ic = inbuf + IY * IX;
  __local float* ix = inbuf + 2 * IY * IX;
  for (int k = tid; k < IY * IX; k += NT) {
    const int r = k / IX, c = k - r * IX;
    const int gy = clampi(y0 - 2 + r, N - 1), gx = clampi(x0 - 2 + c, O - 1);
    ip[k] = in[(clampi(qs - 1, M - 1) * N + gy) * O + gx];
    ic[k] = in[(qs * N + gy) * O + gx];
  }
#endif
  for (int q = qs; q <= qe; ++q) {
#if STAGE
    const int zn = clampi(q + 1, M - 1);
    for (int k = tid; k < IY * IX; k += NT) {
      const int r = k / IX, c = k - r * IX;
      const int gy = clampi(y0 - 2 + r, N - 1), gx = clampi(x0 - 2 + c, O - 1);
      ix[k] = in[(zn * N + gy) * O + gx];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    for (int k = tid; k < SY * SX; k += NT) {
      const int r = k / SX, c = k - r * SX;
      const int cy = clampi(y0 - 1 + r, N - 1), cx = clampi(x0 - 1 + c, O - 1);
#if STAGE
      const int ly = cy - (y0 - 2), lx = cx - (x0 - 2);
      const int lyn = clampi(cy - 1, N - 1) - (y0 - 2), lys = clampi(cy + 1, N - 1) - (y0 - 2);
      const int lxw = clampi(cx - 1, O - 1) - (x0 - 2), lxe = clampi(cx + 1, O - 1) - (x0 - 2);
      sn[k] = j7(ic[ly * IX + lx], ip[ly * IX + lx], ix[ly * IX + lx], ic[lyn * IX + lx],
                 ic[lys * IX + lx], ic[ly * IX + lxw], ic[ly * IX + lxe]);
#else
      const int zf = clampi(q - 1, M - 1), zk = clampi(q + 1, M - 1);
      const int yn = clampi(cy - 1, N - 1), ys = clampi(cy + 1, N - 1);
      const int xw = clampi(cx - 1, O - 1), xe = clampi(cx + 1, O - 1);
      sn[k] = j7(in[(q * N + cy) * O + cx], in[(zf * N + cy) * O + cx], in[(zk * N + cy) * O + cx],
                 in[(q * N + yn) * O + cx], in[(q * N + ys) * O + cx], in[(q * N + cy) * O + xw],
                 in[(q * N + cy) * O + xe]);
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int z = q - 1;
    if (z >= zb) {
      __local float* prev = z == 0 ? sc : sp;
      for (int k = tid; k < TY * TX; k += NT) {
        const int r = k / TX, c = k - r * TX;
        const int y = y0 + r, x = x0 + c;
        const int i = (r + 1) * SX + c + 1;
        if (y < N && x < O)
          out[(z * N + y) * O + x] =
              j7(sc[i], prev[i], sn[i], sc[i - SX], sc[i + SX], sc[i - 1], sc[i + 1]);
      }
    }
    if (q == M - 1 && ze == M) {
      __local float* prev = M == 1 ? sn : sc;
      for (int k = tid; k < TY * TX; k += NT) {
        const int r = k / TX, c = k - r * TX;
        const int y = y0 + r, x = x0 + c;
        const int i = (r + 1) * SX + c + 1;
        if (y < N && x < O)
          out[((M - 1) * N + y) * O + x] =
              j7(sn[i], prev[i], sn[i], sn[i - SX], sn[i + SX], sn[i - 1], sn[i + 1]);
      }
    }
#if !STAGE
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
    __local float* t = sp;
    sp = sc;
    sc = sn;
    sn = t;
#if STAGE
    t = ip;
    ip = ic;
    ic = ix;
    ix = t;
#endif
  }
}
