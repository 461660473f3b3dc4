// Rodinia Hotspot 2D (stencils/hotspot2d.lift), written by hand: one work-item per output point.
// The temperature is read over the clamped 5-point star (pad2D(1, 1, clamp)), the power at the
// point itself. temp, power and out are M rows of N floats, row-major; x = get_global_id(0) runs
// along a row. Launch: global >= (N, M).

float hotspot(float c, float n, float s, float e, float w, float p) {
  float sdc = 0.3413333f;
  float rxInv = 0.1f;
  float ryInv = 0.1f;
  float rzInv = 0.0001953125f;
  return c + sdc * (p + (s + n - 2.0f * c) * ryInv + (e + w - 2.0f * c) * rxInv +
                    (80.0f - c) * rzInv);
}

kernel void hotspot2d_naive(const global float* restrict temp, const global float* restrict power,
                            global float* restrict out, int M, int N) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= N || y >= M)
    return;
  const int up = max(y - 1, 0);
  const int down = min(y + 1, M - 1);
  const int left = max(x - 1, 0);
  const int right = min(x + 1, N - 1);
  out[y * N + x] = hotspot(temp[y * N + x], temp[up * N + x], temp[down * N + x],
                           temp[y * N + right], temp[y * N + left], power[y * N + x]);
}
