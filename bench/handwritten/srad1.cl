// Rodinia SRAD, first kernel (stencils/srad1.lift), written by hand: the diffusion coefficient of
// each point from the clamped 5-point star of the image (pad2D(1, 1, clamp)), one work-item per
// point. image and out are M rows of N floats, row-major; x = get_global_id(0) runs along a row.
// Launch: global >= (N, M).

float sradCoeff(float c, float n, float s, float e, float w) {
  float q0 = 0.053787220269f;
  float dN = n - c;
  float dS = s - c;
  float dE = e - c;
  float dW = w - c;
  float g2 = (dN * dN + dS * dS + dE * dE + dW * dW) / (c * c);
  float l = (dN + dS + dE + dW) / c;
  float num = 0.5f * g2 - 0.0625f * (l * l);
  float den = 1.0f + 0.25f * l;
  float q = num / (den * den);
  float den2 = (q - q0) / (q0 * (1.0f + q0));
  float coeff = 1.0f / (1.0f + den2);
  return clamp(coeff, 0.0f, 1.0f);
}

kernel void srad1_naive(const global float* restrict image, global float* restrict out, int M,
                        int N) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= N || y >= M)
    return;
  const int up = max(y - 1, 0);
  const int down = min(y + 1, M - 1);
  const int left = max(x - 1, 0);
  const int right = min(x + 1, N - 1);
  out[y * N + x] = sradCoeff(image[y * N + x], image[up * N + x], image[down * N + x],
                             image[y * N + right], image[y * N + left]);
}
