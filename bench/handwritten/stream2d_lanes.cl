// Fused time steps of the Jacobi 2D stencils (clamp) and heat 2D (wrap), as a register pipeline
// whose lanes share their halo: the question it answers is what liftx's register pipelines lose
// to their private halo. There, each work-item recomputes 2 r (t - k) columns on either side at
// step k, 1.75 evaluations per output and step for four columns and four steps. Here LANES
// adjacent work-items (a warp) march down a strip together, each holding COLS columns of every
// stage's last three rows in registers, and take the column across either side from their
// neighbour lane (a warp shuffle on NVIDIA; elsewhere, through local memory with barriers, so
// that PoCL checks the same indexing). Only the warp's outer HALO columns on either side are
// recomputed: 128 columns for 120 outputs at four steps.
//
// Stage k (0: the input) produces row i - k in iteration i, from the rows i - k - 1, i - k and
// i - k + 1 of stage k - 1, the last of which stage k - 1 produced in the same iteration: no
// ring, no barrier. Rows past the strip's ends are computed and never stored. Input rows are
// loaded AHEAD iterations before they enter the pipeline.
//
// Boundaries, at every step as the unfused iteration applies them. Clamp: the input is loaded with
// clamped indices; a produced row's value beyond the grid's first (last) column is replaced by the
// first (last) column's, and the row above the first (below the last) by the row itself. Wrap: the
// input is loaded with wrapped indices and every step is computed beyond the edges as anywhere.
//
// The stencil (stencil_point, wrapped, WRAP) is stream2d_stencils.cl's, put before this source.
// Build options: -DBX=<work-items per group, a multiple of LANES> -DSTEPS=<fused steps>
// -DCHUNK=<rows per group> -DSTENCIL=<0: Jacobi 5-point, 1: Jacobi 9-point (clamp); 2: heat
// (wrap)> -DCOLS=<columns per work-item, a multiple of 4> -DLANE_SHUFFLE=<1: PTX shfl.sync>
// -DUNROLL=<rows per unrolled iteration, default 1> -DAHEAD=<input rows loaded ahead, default 1>.
// Launch: global (ceil(units * LANES / BX) * BX, ceil(M / CHUNK)), local (BX, 1), units =
// ceil(N / (LANES COLS - 2 HALO)), HALO = STEPS rounded up to a multiple of COLS (so that every
// lane's columns start on a float4, and column 0 is a lane's first).
#define LANES 32
#define HALO ((STEPS + COLS - 1) / COLS * COLS)
#define OUTPUTS (LANES * COLS - 2 * HALO) // a unit's (warp's) output columns
#define EXT (COLS + 2) // a lane's columns and one on either side
#ifndef UNROLL
#define UNROLL 1
#endif
#define PRAGMA(text) _Pragma(#text)
#define UNROLL_BY(n) PRAGMA(unroll n)
#define UNROLL_ROWS UNROLL_BY(UNROLL)
#ifndef AHEAD
#define AHEAD 1
#endif

#if LANE_SHUFFLE
// The value `v` of the lane below (above); the first (last) lane gets its own.
inline float from_lane_below(float v) {
  float r;
  asm volatile("shfl.sync.up.b32 %0, %1, 1, 0, 0xffffffff;" : "=f"(r) : "f"(v));
  return r;
}
inline float from_lane_above(float v) {
  float r;
  asm volatile("shfl.sync.down.b32 %0, %1, 1, 31, 0xffffffff;" : "=f"(r) : "f"(v));
  return r;
}
#define EXCHANGE(v_last, v_first, left, right)                                                     \
  do {                                                                                             \
    left = from_lane_below(v_last);                                                                \
    right = from_lane_above(v_first);                                                              \
  } while (0)
#else
// The same through local memory: every work-item of the group calls it (no divergence), lanes
// of one unit read each other, a unit's first and last lane their own value.
inline void exchange(local float* slots, float v_last, float v_first, float* left, float* right) {
  const int tx = get_local_id(0);
  const int lane = tx % LANES;
  barrier(CLK_LOCAL_MEM_FENCE);
  slots[tx] = v_last;
  slots[BX + tx] = v_first;
  barrier(CLK_LOCAL_MEM_FENCE);
  *left = lane > 0 ? slots[tx - 1] : v_last;
  *right = lane < LANES - 1 ? slots[BX + tx + 1] : v_first;
}
#define EXCHANGE(v_last, v_first, left, right) exchange(slots, v_last, v_first, &left, &right)
#endif

kernel __attribute__((reqd_work_group_size(BX, 1, 1))) void
stream2d_lanes(const global float* restrict in, global float* restrict out, int M, int N) {
#if !LANE_SHUFFLE
  local float slots[2 * BX];
#endif
  const int lane = get_local_id(0) % LANES;
  const int unit = get_global_id(0) / LANES;
  const int unit_first = unit * OUTPUTS;          // the unit's first output column
  const int x0 = unit_first - HALO + lane * COLS; // the lane's first column
  // Loads with float4 when the lane's columns are inside the grid and rows start on a float4.
  const bool vector_loads = (N & 3) == 0 && x0 >= 0 && x0 + COLS <= N;
  int cx[COLS];
#pragma unroll
  for (int c = 0; c < COLS; ++c)
#if WRAP
    cx[c] = wrapped(x0 + c, N);
#else
    cx[c] = clamp(x0 + c, 0, N - 1);
#endif
  // Outputs: the unit's columns (not its halo) inside the grid.
  const int store_first = max(unit_first, 0);
  const int store_end = min(unit_first + OUTPUTS, N);
  const bool vector_stores = (N & 3) == 0 && x0 >= store_first && x0 + COLS <= store_end;
  const bool any_store = x0 + COLS > store_first && x0 < store_end;
#if !WRAP
  // Clamp: the lane that owns column 0 (N - 1) repairs the column beyond it in its rows. Lanes
  // start on multiples of COLS, so column 0 is always a lane's first and column -1 its left
  // neighbour's; column N - 1 is a lane's last only when N is a multiple of COLS. (The repairs are
  // selects on values, not stores under a condition on the column: the compiler turns those into
  // a store at a computed index, which moves the windows out of registers.)
  const bool owns_first = x0 == 0;
  const int last_column_at = N - 1 - x0; // the lane's column that is the grid's last
  const bool owns_last = last_column_at >= 0 && last_column_at < COLS;
  const bool last_inside = owns_last && last_column_at < COLS - 1;
#endif

  const int y0 = get_group_id(1) * CHUNK;
  const int y1 = min(y0 + CHUNK, M);
#if WRAP
  const int first = y0 - STEPS;
#else
  const int first = max(y0 - STEPS, 0);
#endif
  // Stage STEPS produces row y1 - 1 in iteration y1 - 1 + STEPS. The iterations are rounded up to
  // a whole number of UNROLL, the rows past y1 computed and not stored: with exactly y1 + STEPS -
  // first of them, NVIDIA's compiler, unrolling a one-step clamped kernel's loop by three, dropped
  // the store's test p < y1 (which the loop's bound then implies) and wrote the row below the
  // grid (compute-sanitizer, 2026-12-05).
  const int end = first + (y1 + STEPS - first + UNROLL - 1) / UNROLL * UNROLL;

  // window[k][0..2]: the last three rows stage k produced (oldest first), each with one column
  // on either side of the lane's.
  float window[STEPS][3][EXT];
#pragma unroll
  for (int k = 0; k < STEPS; ++k)
#pragma unroll
    for (int j = 0; j < 3; ++j)
#pragma unroll
      for (int c = 0; c < EXT; ++c)
        window[k][j][c] = 0.0f;

  // The next AHEAD input rows, loaded before they are needed (oldest first).
  float ahead[AHEAD][COLS];
#define LOAD_ROW(row_index, dest)                                                                  \
  do {                                                                                             \
    const int load_row = WRAP ? wrapped(row_index, M) : min(row_index, M - 1);                     \
    const global float* row_ptr = in + (size_t)load_row * N;                                       \
    if (vector_loads) {                                                                            \
      _Pragma("unroll") for (int q = 0; q < COLS / 4; ++q) {                                       \
        const float4 v = ((const global float4*)(row_ptr + x0))[q];                                \
        dest[4 * q] = v.x;                                                                         \
        dest[4 * q + 1] = v.y;                                                                     \
        dest[4 * q + 2] = v.z;                                                                     \
        dest[4 * q + 3] = v.w;                                                                     \
      }                                                                                            \
    } else {                                                                                       \
      _Pragma("unroll") for (int c = 0; c < COLS; ++c) dest[c] = row_ptr[cx[c]];                   \
    }                                                                                              \
  } while (0)

#pragma unroll
  for (int a = 0; a < AHEAD; ++a)
    LOAD_ROW(first + a, ahead[a]);
  // Unrolled by three rows, the windows' shifts become renamed registers.
  UNROLL_ROWS
  for (int i = first; i < end; ++i) {
    float produced[COLS];
#pragma unroll
    for (int c = 0; c < COLS; ++c)
      produced[c] = ahead[0][c];
#pragma unroll
    for (int a = 0; a + 1 < AHEAD; ++a)
#pragma unroll
      for (int c = 0; c < COLS; ++c)
        ahead[a][c] = ahead[a + 1][c];
    if (i + AHEAD < end)
      LOAD_ROW(i + AHEAD, ahead[AHEAD - 1]);
#pragma unroll
    for (int k = 0; k <= STEPS; ++k) {
      const int p = i - k; // the row stage k produced (k = 0: loaded) in this iteration
      if (k > 0) {
        // Stage k's row p from stage k - 1's rows p - 1, p, p + 1.
#pragma unroll
        for (int c = 0; c < COLS; ++c)
          produced[c] =
              stencil_point(window[k - 1][0][c], window[k - 1][0][c + 1], window[k - 1][0][c + 2],
                            window[k - 1][1][c], window[k - 1][1][c + 1], window[k - 1][1][c + 2],
                            window[k - 1][2][c], window[k - 1][2][c + 1], window[k - 1][2][c + 2]);
      }
      if (k == STEPS) {
        if (p >= y0 && p < y1 && any_store) {
          global float* row_out = out + (size_t)p * N;
          if (vector_stores) {
#pragma unroll
            for (int q = 0; q < COLS / 4; ++q)
              ((global float4*)(row_out + x0))[q] =
                  (float4)(produced[4 * q], produced[4 * q + 1], produced[4 * q + 2],
                           produced[4 * q + 3]);
          } else {
#pragma unroll
            for (int c = 0; c < COLS; ++c)
              if (x0 + c >= store_first && x0 + c < store_end)
                row_out[x0 + c] = produced[c];
          }
        }
        continue; // the last stage's row is stored, not kept
      }
#if !WRAP
      if (last_inside) {
        // Columns past N - 1 inside the lane: the one right of it takes its value.
#pragma unroll
        for (int c = 1; c < COLS; ++c)
          produced[c] = c - 1 == last_column_at ? produced[c - 1] : produced[c];
      }
#endif
      // Shift the row into stage k's window with its neighbours' columns across either side.
      float left, right;
      EXCHANGE(produced[COLS - 1], produced[0], left, right);
#if !WRAP
      left = owns_first ? produced[0] : left;
      right = owns_last ? produced[COLS - 1] : right;
#endif
#pragma unroll
      for (int c = 0; c < EXT; ++c) {
        window[k][0][c] = window[k][1][c];
        window[k][1][c] = window[k][2][c];
      }
      window[k][2][0] = left;
#pragma unroll
      for (int c = 0; c < COLS; ++c)
        window[k][2][c + 1] = produced[c];
      window[k][2][COLS + 1] = right;
#if !WRAP
      // Stage k + 1 computes row p - 1 next: at the grid's first row its row above is itself,
      // at the last its row below.
      if (p == 1) {
#pragma unroll
        for (int c = 0; c < EXT; ++c)
          window[k][0][c] = window[k][1][c];
      }
      if (p == M) {
#pragma unroll
        for (int c = 0; c < EXT; ++c)
          window[k][2][c] = window[k][1][c];
      }
#endif
    }
  }
}
