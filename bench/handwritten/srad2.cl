// Rodinia SRAD, second kernel (stencils/srad2.lift), written by hand: the image update, one
// work-item per point. Of the coefficient it reads the point, its south (row y + 1) and east
// (column x + 1) neighbours, clamped at the last row and column (pad2D(1, 1, clamp)); the other
// grids point-wise. All arrays are M rows of N floats, row-major, in the .lift parameter order
// (image, coeff, dN, dS, dE, dW); x = get_global_id(0) runs along a row. Launch: global >= (N, M).

float sradUpdate(float img, float cC, float cS, float cE, float dN, float dS, float dE,
                 float dW) {
  float div = cC * dN + cS * dS + cC * dW + cE * dE;
  return img + 0.125f * div;
}

kernel void srad2_naive(const global float* restrict image, const global float* restrict coeff,
                        const global float* restrict dN, const global float* restrict dS,
                        const global float* restrict dE, const global float* restrict dW,
                        global float* restrict out, int M, int N) {
  const int x = get_global_id(0);
  const int y = get_global_id(1);
  if (x >= N || y >= M)
    return;
  const int i = y * N + x;
  const int down = min(y + 1, M - 1);
  const int right = min(x + 1, N - 1);
  out[i] = sradUpdate(image[i], coeff[i], coeff[down * N + x], coeff[y * N + right], dN[i], dS[i],
                      dE[i], dW[i]);
}
