// The stencils of stream2d.cl and stream2d_lanes.cl (stream_pipeline_bench puts this before
// either): a step of stencils/jacobi2d5pt.lift, jacobi2d9pt.lift (clamp) or
// stencils/iterated/heat2d.lift (wrap), chosen by -DSTENCIL=<0, 1, 2>, at one point from its 3x3
// neighbourhood, in the order the .lift files compute it.
#define WRAP (STENCIL == 2)

inline float stencil_point(float nw, float n, float ne, float w, float c, float e, float sw,
                           float s, float se) {
#if STENCIL == 1
  return (7.0f * nw + 5.0f * n + 9.0f * ne + 12.0f * w + 15.0f * c + 12.0f * e + 9.0f * sw +
          5.0f * s + 7.0f * se) /
         118.0f;
#elif STENCIL == 2
  return c + 0.125f * (n + s + e + w - 4.0f * c);
#else
  return (5.0f * n + 12.0f * w + 15.0f * c + 5.0f * s + 12.0f * e) / 118.0f;
#endif
}

/// i modulo n, in [0, n) for negative i too.
inline int wrapped(int i, int n) { return (i % n + n) % n; }
