// Rodinia Hotspot 3D (stencils/3d/hotspot3d.lift), written by hand: one work-item per output
// point. The temperature is read over the clamped 7-point star (pad3D(1, 1, clamp)), the power at
// the point itself. temp, power and out are M layers (z) of N rows (y) of O floats (x), x fastest;
// x = get_global_id(0) runs along a row, y = get_global_id(1), z = get_global_id(2). Launch:
// global >= (O, N, M); work-items outside the grid return.

float hotspot(float c, float n, float s, float e, float w, float t, float b, float p) {
  float cc = 0.861866653f;
  float cns = 0.0341333300f;
  float cew = 0.0341333300f;
  float ctb = 0.000533333281f;
  float sdc = 0.341333300f;
  float ambTemp = 80.0f;
  return c * cc + n * cns + s * cns + e * cew + w * cew + t * ctb + b * ctb + sdc * p +
         ctb * ambTemp;
}

kernel void hotspot3d_naive(const global float* restrict temp, const global float* restrict power,
                            global float* restrict out, int M, int N, int O) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  const int z = get_global_id(2);
  if (x >= O || y >= N || z >= M)
    return;
  // The padded window's indices along each axis: AT(i, j, k) is the .lift program's nbh[i][j][k].
  const int zs[3] = {max(z - 1, 0), z, min(z + 1, M - 1)};
  const int ys[3] = {max(y - 1, 0), y, min(y + 1, N - 1)};
  const int xs[3] = {max(x - 1, 0), x, min(x + 1, O - 1)};
#define AT(i, j, k) temp[(zs[i] * N + ys[j]) * O + xs[k]]
  const int point = (z * N + y) * O + x;
  out[point] = hotspot(AT(1, 1, 1), AT(1, 0, 1), AT(1, 2, 1), AT(1, 1, 2), AT(1, 1, 0),
                       AT(2, 1, 1), AT(0, 1, 1), power[point]);
#undef AT
}
