// Fused time steps of the Jacobi 2D stencils (stencils/jacobi2d5pt.lift, jacobi2d9pt.lift, clamp
// boundary) and of heat 2D (stencils/iterated/heat2d.lift's step, wrap boundary), written by hand in AN5D's "N.5D" form (Matsumura et al., CGO 2020): a work-group of
// BX work-items owns a strip of BX - 2 STEPS columns (one column per work-item, STEPS columns of
// halo recomputed on either side) and CHUNK rows, and marches down it. Each fused step is a stage
// that keeps the last rows it produced in a ring of local memory; every stage advances one row
// per iteration, stage k lagging 2k rows behind the input, so that the rows a stage reads were all
// written in earlier iterations: one barrier per row for all the steps (AN5D's double buffering
// needs one per row and step).
// The next input row is loaded before the stages run, its latency hidden behind their work.
//
// The boundary is applied at every step exactly as the unfused iteration applies it. Clamp: a
// step's point at the grid's first (last) row or column reads that row (column) where the stencil
// reaches beyond it. Wrap: rows and columns past an edge are those of the other edge, and every
// step is computed there as anywhere else. Rows above and below the chunk are recomputed
// (STEPS - k of them at step k).
//
// Build options: -DBX=<work-items per group> -DSTEPS=<fused steps> -DCHUNK=<rows per group>
// -DSTENCIL=<0: Jacobi 5-point star, 1: Jacobi 9-point box, both clamp; 2: heat 5-point, wrap>
// -DREGS=<1: a point's own column from registers, as AN5D keeps it; 0: every tap from local
// memory>. Launch: global (groups_x * BX, ceil(M / CHUNK)),
// local (BX, 1), groups_x = ceil(N / (BX - 2 STEPS)).
#define RING 4 // a power of two: slot r & (RING - 1), negative rows (wrap) included
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

inline int wrapped(int i, int n) { return (i % n + n) % n; }

kernel __attribute__((reqd_work_group_size(BX, 1, 1))) void
stream2d(const global float* restrict in, global float* restrict out, int M, int N) {
  // Stage 0 holds input rows, stage k (1 to STEPS - 1) step k's rows; step STEPS goes to `out`.
  local float ring[STEPS][RING][BX];
  const int tx = get_local_id(0);
  const int gx = (int)get_group_id(0) * (BX - 2 * STEPS) - STEPS + tx;
  // The neighbours' lanes: with clamp, at the grid's first or last column the clamped neighbour
  // is the point itself. The group's outermost lanes read garbage that moves inward one lane per
  // step and never reaches the lanes that write.
#if WRAP
  const int cx = wrapped(gx, N);
  const int lx = max(tx - 1, 0);
  const int rx = min(tx + 1, BX - 1);
#else
  const int cx = clamp(gx, 0, N - 1);
  const int lx = gx <= 0 ? tx : max(tx - 1, 0);
  const int rx = gx >= N - 1 ? tx : min(tx + 1, BX - 1);
#endif
  const bool writes = tx >= STEPS && tx < BX - STEPS && gx < N;
  const int y0 = (int)get_group_id(1) * CHUNK;
  const int y1 = min(y0 + CHUNK, M);
  // The input rows the chunk needs: [first, last) (wrap: past the edges, the other edge's).
#if WRAP
  const int first = y0 - STEPS;
  const int last = y1 + STEPS;
#else
  const int first = max(y0 - STEPS, 0);
  const int last = min(y1 + STEPS, M);
#endif
#if REGS
  // The own column of the last three rows each stage produced (stage 0: the input), oldest first:
  // the point's own taps come from registers, only its neighbours' from local memory.
  float own[STEPS][3];
#pragma unroll
  for (int s = 0; s < STEPS; ++s)
    own[s][0] = own[s][1] = own[s][2] = 0.0f;
#endif
  for (int i = first; i < last + 2 * STEPS; ++i) {
#if WRAP
    const float incoming = i < last ? in[wrapped(i, M) * N + cx] : 0.0f;
#else
    const float incoming = i < last ? in[i * N + cx] : 0.0f;
#endif
#if REGS
    float produced[STEPS + 1];
    produced[0] = incoming;
#endif
#pragma unroll
    for (int k = 1; k <= STEPS; ++k) {
      const int r = i - 2 * k; // the row step k computes in this iteration
#if WRAP
      const int lo = y0 - (STEPS - k);
      const int hi = y1 + (STEPS - k);
      const int above = r - 1, below = r + 1;
#else
      const int lo = max(y0 - (STEPS - k), 0);
      const int hi = min(y1 + (STEPS - k), M);
      const int above = max(r - 1, 0), below = min(r + 1, M - 1);
#endif
      float v = 0.0f;
      if (r >= lo && r < hi) {
        local const float* up = ring[k - 1][above & (RING - 1)];
        local const float* mid = ring[k - 1][r & (RING - 1)];
        local const float* down = ring[k - 1][below & (RING - 1)];
#if REGS
        // Rows r - 1, r, r + 1 of step k - 1 were produced 3, 2 and 1 iterations ago; with clamp,
        // beyond the grid's first or last row the tap is row r itself.
        const float c = own[k - 1][1];
        const float n = above == r ? c : own[k - 1][0];
        const float s = below == r ? c : own[k - 1][2];
        v = stencil_point(up[lx], n, up[rx], mid[lx], c, mid[rx], down[lx], s, down[rx]);
#else
        v = stencil_point(up[lx], up[tx], up[rx], mid[lx], mid[tx], mid[rx], down[lx], down[tx],
                          down[rx]);
#endif
        if (k < STEPS)
          ring[k][r & (RING - 1)][tx] = v;
        else if (writes)
          out[r * N + gx] = v;
      }
#if REGS
      produced[k] = v;
#endif
    }
    if (i < last)
      ring[0][i & (RING - 1)][tx] = incoming;
#if REGS
#pragma unroll
    for (int s = 0; s < STEPS; ++s) {
      own[s][0] = own[s][1];
      own[s][1] = own[s][2];
      own[s][2] = produced[s];
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
