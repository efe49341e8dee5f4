/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The typed loops of rnn.c, compiled once per compute type: rnn.c includes this file twice,
 * with T (float, double), SFX(name) (name##_f32, name##_f64), SIGMOID and TANH defined, after
 * rnn_job.  No include guard, on purpose.  Each loop runs batch rows [begin, end) of
 * contiguous [B, k H] operands; optional operands are NULL when absent.
 */

/* _thnn_fused_lstm_cell: gates = input_gates + hidden_gates (+ input_bias + hidden_bias),
 * i, f, o = sigmoid, g = tanh of its four chunks; cy = f cx + i g, hy = o tanh(cy);
 * workspace = [i, f, g, o]. */
EMU_HOT_LOOP static void SFX(lstm_forward)(void *context, int64_t begin, int64_t end) {
  const rnn_job *j = context;
  const int64_t H = j->H;
  const T *ig = j->in[0], *hg = j->in[1], *cx = j->in[2], *ib = j->in[3], *hb = j->in[4];
  T *hy = j->out[0], *cy = j->out[1], *ws = j->out[2];
  for (int64_t b = begin; b < end; b++) {
    const T *x = ig + b * 4 * H, *h = hg + b * 4 * H;
    T *w = ws + b * 4 * H;
    for (int64_t k = 0; k < H; k++) {
      T gate[4];
      for (int q = 0; q < 4; q++) {
        gate[q] = x[q * H + k] + h[q * H + k];
        if (ib != NULL) gate[q] = gate[q] + ib[q * H + k] + hb[q * H + k];
      }
      const T i = SIGMOID(gate[0]), f = SIGMOID(gate[1]), g = TANH(gate[2]);
      const T o = SIGMOID(gate[3]);
      const T c = f * cx[b * H + k] + i * g;
      cy[b * H + k] = c;
      hy[b * H + k] = o * TANH(c);
      w[k] = i;
      w[H + k] = f;
      w[2 * H + k] = g;
      w[3 * H + k] = o;
    }
  }
}

/* _thnn_fused_lstm_cell_backward_impl, from the workspace: grad_gates and grad_cx (absent
 * grad_hy / grad_cy count as zeros). */
EMU_HOT_LOOP static void SFX(lstm_backward)(void *context, int64_t begin, int64_t end) {
  const rnn_job *j = context;
  const int64_t H = j->H;
  const T *ghy = j->in[0], *gcy = j->in[1], *cx = j->in[2], *cy = j->in[3], *ws = j->in[4];
  T *gg = j->out[0], *gcx = j->out[1];
  for (int64_t b = begin; b < end; b++) {
    const T *w = ws + b * 4 * H;
    T *d = gg + b * 4 * H;
    for (int64_t k = 0; k < H; k++) {
      const T i = w[k], f = w[H + k], g = w[2 * H + k], o = w[3 * H + k];
      const T grad_hy = ghy != NULL ? ghy[b * H + k] : (T)0;
      const T tanh_cy = TANH(cy[b * H + k]);
      T grad_c = gcy != NULL ? gcy[b * H + k] : (T)0;
      grad_c = grad_c + grad_hy * o * ((T)1 - tanh_cy * tanh_cy);
      d[k] = grad_c * g * ((T)1 - i) * i;
      d[H + k] = grad_c * cx[b * H + k] * ((T)1 - f) * f;
      d[2 * H + k] = grad_c * i * ((T)1 - g * g);
      d[3 * H + k] = grad_hy * tanh_cy * ((T)1 - o) * o;
      gcx[b * H + k] = grad_c * f;
    }
  }
}

/* _thnn_fused_gru_cell: r, z = sigmoid of the first two chunks of input_gates + hidden_gates
 * (with their biases), n = tanh(input chunk 3 + r hidden chunk 3); hy = n + z (hx - n);
 * workspace = [r, z, n, hx, hidden chunk 3 with its bias]. */
EMU_HOT_LOOP static void SFX(gru_forward)(void *context, int64_t begin, int64_t end) {
  const rnn_job *j = context;
  const int64_t H = j->H;
  const T *ig = j->in[0], *hg = j->in[1], *hx = j->in[2], *ib = j->in[3], *hb = j->in[4];
  T *hy = j->out[0], *ws = j->out[1];
  for (int64_t b = begin; b < end; b++) {
    const T *x = ig + b * 3 * H, *h = hg + b * 3 * H;
    T *w = ws + b * 5 * H;
    for (int64_t k = 0; k < H; k++) {
      T in[3], hid[3];
      for (int q = 0; q < 3; q++) {
        in[q] = ib != NULL ? x[q * H + k] + ib[q * H + k] : x[q * H + k];
        hid[q] = hb != NULL ? h[q * H + k] + hb[q * H + k] : h[q * H + k];
      }
      const T r = SIGMOID(in[0] + hid[0]), z = SIGMOID(in[1] + hid[1]);
      const T n = TANH(in[2] + r * hid[2]);
      const T prev = hx[b * H + k];
      hy[b * H + k] = n + z * (prev - n);
      w[k] = r;
      w[H + k] = z;
      w[2 * H + k] = n;
      w[3 * H + k] = prev;
      w[4 * H + k] = hid[2];
    }
  }
}

/* _thnn_fused_gru_cell_backward, from the workspace: grad_input_gates, grad_hidden_gates and
 * grad_hx. */
EMU_HOT_LOOP static void SFX(gru_backward)(void *context, int64_t begin, int64_t end) {
  const rnn_job *j = context;
  const int64_t H = j->H;
  const T *ghy = j->in[0], *ws = j->in[1];
  T *gi = j->out[0], *gh = j->out[1], *ghx = j->out[2];
  for (int64_t b = begin; b < end; b++) {
    const T *w = ws + b * 5 * H;
    T *di = gi + b * 3 * H, *dh = gh + b * 3 * H;
    for (int64_t k = 0; k < H; k++) {
      const T r = w[k], z = w[H + k], n = w[2 * H + k], prev = w[3 * H + k], hn = w[4 * H + k];
      const T g = ghy[b * H + k];
      const T grad_z = g * (prev - n) * ((T)1 - z) * z;
      const T grad_n = g * ((T)1 - z) * ((T)1 - n * n);
      const T grad_r = grad_n * hn * ((T)1 - r) * r;
      di[k] = dh[k] = grad_r;
      di[H + k] = dh[H + k] = grad_z;
      di[2 * H + k] = grad_n;
      dh[2 * H + k] = grad_n * r;
      ghx[b * H + k] = g * z;
    }
  }
}

/* Columns [begin, end) of `sum` (j->out[j->sum_out]) = the column sums over the batch of the
 * [B, cols] gradient j->out[j->sum_of], accumulated in double. */
static void SFX(column_sums)(void *context, int64_t begin, int64_t end) {
  const rnn_job *j = context;
  const T *x = j->out[j->sum_of];
  T *sum = j->out[j->sum_out];
  double acc[256];
  for (int64_t c0 = begin; c0 < end; c0 += 256) {
    const int64_t width = end - c0 < 256 ? end - c0 : 256;
    for (int64_t c = 0; c < width; c++) acc[c] = 0;
    for (int64_t b = 0; b < j->B; b++) {
      const T *row = x + b * j->cols + c0;
      for (int64_t c = 0; c < width; c++) acc[c] += (double)row[c];
    }
    for (int64_t c = 0; c < width; c++) sum[c0 + c] = (T)acc[c];
  }
}
