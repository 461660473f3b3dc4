// Fused time steps of the Jacobi 2D stencils (stencils/jacobi2d5pt.lift, jacobi2d9pt.lift, clamp
// boundary) and of heat 2D (stencils/iterated/heat2d.lift's step, wrap boundary), written by hand
// in AN5D's "N.5D" form (Matsumura et al., CGO 2020): a work-group of BX work-items owns a strip
// of BX COLS - 2 STEPS columns (COLS adjacent columns per work-item, STEPS columns of halo
// recomputed on either side) and CHUNK rows, and marches down it. Each fused step is a stage
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
// The stencil (stencil_point, wrapped, WRAP) is stream2d_stencils.cl's, put before this source.
// Build options: -DBX=<work-items per group> -DSTEPS=<fused steps> -DCHUNK=<rows per group>
// -DSTENCIL=<0: Jacobi 5-point star, 1: Jacobi 9-point box, both clamp; 2: heat 5-point, wrap>
// -DREGS=<1: a work-item's own columns from registers, as AN5D keeps them; 0: every tap from local
// memory> -DCOLS=<columns per work-item: a row is stored column-major by work-item, ring[c][tx],
// so the neighbour across two work-items' columns is read without bank conflicts>. Launch:
// global (groups_x * BX, ceil(M / CHUNK)), local (BX, 1), groups_x = ceil(N / (BX COLS - 2 STEPS)).
#define RING 4 // a power of two: slot r & (RING - 1), negative rows (wrap) included
#ifndef COLS
#define COLS 1
#endif

kernel __attribute__((reqd_work_group_size(BX, 1, 1))) void
stream2d(const global float* restrict in, global float* restrict out, int M, int N) {
  // Stage 0 holds input rows, stage k (1 to STEPS - 1) step k's rows; step STEPS goes to `out`.
  local float ring[STEPS][RING][COLS][BX];
  const int tx = get_local_id(0);
  // The strip's column of the work-item's column c is tx COLS + c; its grid column x0 + c.
  const int x0 = (int)get_group_id(0) * (BX * COLS - 2 * STEPS) - STEPS + tx * COLS;
  // The neighbour lanes across the work-item's first and last column. The group's outermost
  // lanes read garbage that moves inward one column per step and never reaches the columns that
  // are written.
  const int lx = max(tx - 1, 0);
  const int rx = min(tx + 1, BX - 1);
  int cx[COLS]; // the grid column each column loads (clamped or wrapped)
  bool at_left[COLS], at_right[COLS], writes[COLS];
#pragma unroll
  for (int c = 0; c < COLS; ++c) {
    const int gx = x0 + c;
#if WRAP
    cx[c] = wrapped(gx, N);
    at_left[c] = at_right[c] = false;
#else
    cx[c] = clamp(gx, 0, N - 1);
    // With clamp, at the grid's first or last column the neighbour beyond it is the point itself.
    at_left[c] = gx <= 0;
    at_right[c] = gx >= N - 1;
#endif
    const int sx = tx * COLS + c;
    writes[c] = sx >= STEPS && sx < BX * COLS - STEPS && gx < N;
  }
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
  // The own columns of the last three rows each stage produced (stage 0: the input), oldest
  // first: taps within the work-item's columns come from registers, only those across its first
  // and last column from local memory.
  float own[STEPS][3][COLS];
#pragma unroll
  for (int s = 0; s < STEPS; ++s)
#pragma unroll
    for (int c = 0; c < COLS; ++c)
      own[s][0][c] = own[s][1][c] = own[s][2][c] = 0.0f;
#endif
  for (int i = first; i < last + 2 * STEPS; ++i) {
    float incoming[COLS];
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
#if WRAP
      incoming[c] = i < last ? in[wrapped(i, M) * N + cx[c]] : 0.0f;
#else
      incoming[c] = i < last ? in[i * N + cx[c]] : 0.0f;
#endif
    }
#if REGS
    float produced[STEPS + 1][COLS];
#pragma unroll
    for (int c = 0; c < COLS; ++c)
      produced[0][c] = incoming[c];
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
      float v[COLS];
      if (r >= lo && r < hi) {
        // Rows r - 1, r, r + 1 of step k - 1 (produced 3, 2 and 1 iterations ago); with clamp,
        // beyond the grid's first or last row the tap is row r itself.
        const int slots[3] = {above & (RING - 1), r & (RING - 1), below & (RING - 1)};
        float taps[3][3][COLS]; // [row][left, centre, right][column]
#pragma unroll
        for (int y = 0; y < 3; ++y) {
          local const float(*row)[BX] = ring[k - 1][slots[y]];
          float centre[COLS];
#pragma unroll
          for (int c = 0; c < COLS; ++c) {
#if REGS
            const int age = y == 0 ? (above == r ? 1 : 0) : y == 2 ? (below == r ? 1 : 2) : 1;
            centre[c] = age == 0   ? own[k - 1][0][c]
                        : age == 1 ? own[k - 1][1][c]
                                   : own[k - 1][2][c];
#else
            centre[c] = row[c][tx];
#endif
          }
#pragma unroll
          for (int c = 0; c < COLS; ++c) {
            const float left = c > 0 ? centre[c - 1] : row[COLS - 1][lx];
            const float right = c < COLS - 1 ? centre[c + 1] : row[0][rx];
            taps[y][0][c] = at_left[c] ? centre[c] : left;
            taps[y][1][c] = centre[c];
            taps[y][2][c] = at_right[c] ? centre[c] : right;
          }
        }
#pragma unroll
        for (int c = 0; c < COLS; ++c) {
          v[c] = stencil_point(taps[0][0][c], taps[0][1][c], taps[0][2][c], taps[1][0][c],
                               taps[1][1][c], taps[1][2][c], taps[2][0][c], taps[2][1][c],
                               taps[2][2][c]);
          if (k < STEPS)
            ring[k][r & (RING - 1)][c][tx] = v[c];
          else if (writes[c])
            out[r * N + x0 + c] = v[c];
        }
      } else {
#pragma unroll
        for (int c = 0; c < COLS; ++c)
          v[c] = 0.0f;
      }
#if REGS
#pragma unroll
      for (int c = 0; c < COLS; ++c)
        produced[k][c] = v[c];
#endif
    }
    if (i < last) {
#pragma unroll
      for (int c = 0; c < COLS; ++c)
        ring[0][i & (RING - 1)][c][tx] = incoming[c];
    }
#if REGS
#pragma unroll
    for (int s = 0; s < STEPS; ++s)
#pragma unroll
      for (int c = 0; c < COLS; ++c) {
        own[s][0][c] = own[s][1][c];
        own[s][1][c] = own[s][2][c];
        own[s][2][c] = produced[s][c];
      }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}
