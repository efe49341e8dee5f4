/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The fused recurrent cells ATen selects for an accelerator (as for CUDA): LSTM and GRU, forward
 * and backward, over [B, k H] operands (outputs contiguous; inputs rows of unit column stride,
 * their row strides s_*: the gates of one time step are slices), one work-item per (batch row,
 * hidden unit);
 * and the column sums that make the biases' gradients (one work-item per column, the batch
 * summed in order).  The host (kernels/rnn.c) prefixes T and ACC; absent optional operands
 * point at a present one and their flag is 0.
 */
#define SIGMOID(x) ((ACC)1 / ((ACC)1 + exp(-(x))))

/* gates = input_gates + hidden_gates (+ both biases); i, f, o = sigmoid, g = tanh of the four
 * chunks; cy = f cx + i g, hy = o tanh(cy); workspace = [i, f, g, o] */
__kernel void tb_lstm(OCL_PTR(T, hy), OCL_PTR(T, cy), OCL_PTR(T, ws), OCL_PTR(T, ig),
                      OCL_PTR(T, hg), OCL_PTR(T, cx), OCL_PTR(T, ib), OCL_PTR(T, hb), long B,
                      long H, long s_ig, long s_hg, long s_cx, int has_bias) {
  long i = get_global_id(0);
  if (i >= B * H) return;
  long b = i / H, k = i % H;
  ACC gate[4];
  for (int q = 0; q < 4; q++) {
    gate[q] = (ACC)OCL_AT(T, ig)[b * s_ig + q * H + k] + (ACC)OCL_AT(T, hg)[b * s_hg + q * H + k];
    if (has_bias) gate[q] = gate[q] + (ACC)OCL_AT(T, ib)[q * H + k] + (ACC)OCL_AT(T, hb)[q * H + k];
  }
  ACC in = SIGMOID(gate[0]), f = SIGMOID(gate[1]), g = tanh(gate[2]), o = SIGMOID(gate[3]);
  ACC c = f * (ACC)OCL_AT(T, cx)[b * s_cx + k] + in * g;
  OCL_AT(T, cy)[i] = (T)c;
  OCL_AT(T, hy)[i] = (T)(o * tanh(c));
  OCL_AT(T, ws)[b * 4 * H + k] = (T)in;
  OCL_AT(T, ws)[b * 4 * H + H + k] = (T)f;
  OCL_AT(T, ws)[b * 4 * H + 2 * H + k] = (T)g;
  OCL_AT(T, ws)[b * 4 * H + 3 * H + k] = (T)o;
}

/* the LSTM's gradients from the workspace: grad_gates and grad_cx (an absent grad_hy or
 * grad_cy counts as zeros) */
__kernel void tb_lstm_backward(OCL_PTR(T, gg), OCL_PTR(T, gcx), OCL_PTR(T, ghy), OCL_PTR(T, gcy),
                               OCL_PTR(T, cx), OCL_PTR(T, cy), OCL_PTR(T, ws), long B, long H,
                               long s_ghy, long s_gcy, long s_cx, long s_cy, int has_ghy,
                               int has_gcy) {
  long i = get_global_id(0);
  if (i >= B * H) return;
  long b = i / H, k = i % H, w = b * 4 * H;
  ACC in = (ACC)OCL_AT(T, ws)[w + k], f = (ACC)OCL_AT(T, ws)[w + H + k];
  ACC g = (ACC)OCL_AT(T, ws)[w + 2 * H + k], o = (ACC)OCL_AT(T, ws)[w + 3 * H + k];
  ACC grad_hy = has_ghy ? (ACC)OCL_AT(T, ghy)[b * s_ghy + k] : (ACC)0;
  ACC tanh_cy = tanh((ACC)OCL_AT(T, cy)[b * s_cy + k]);
  ACC grad_c = has_gcy ? (ACC)OCL_AT(T, gcy)[b * s_gcy + k] : (ACC)0;
  grad_c = grad_c + grad_hy * o * ((ACC)1 - tanh_cy * tanh_cy);
  OCL_AT(T, gg)[w + k] = (T)(grad_c * g * ((ACC)1 - in) * in);
  OCL_AT(T, gg)[w + H + k] = (T)(grad_c * (ACC)OCL_AT(T, cx)[b * s_cx + k] * ((ACC)1 - f) * f);
  OCL_AT(T, gg)[w + 2 * H + k] = (T)(grad_c * in * ((ACC)1 - g * g));
  OCL_AT(T, gg)[w + 3 * H + k] = (T)(grad_hy * tanh_cy * ((ACC)1 - o) * o);
  OCL_AT(T, gcx)[i] = (T)(grad_c * f);
}

/* r, z = sigmoid of the first two chunks of input_gates + hidden_gates (with their biases),
 * n = tanh(input chunk 3 + r hidden chunk 3); hy = n + z (hx - n); workspace = [r, z, n, hx,
 * hidden chunk 3 with its bias] */
__kernel void tb_gru(OCL_PTR(T, hy), OCL_PTR(T, ws), OCL_PTR(T, ig), OCL_PTR(T, hg),
                     OCL_PTR(T, hx), OCL_PTR(T, ib), OCL_PTR(T, hb), long B, long H,
                     long s_ig, long s_hg, long s_hx, int has_bias) {
  long i = get_global_id(0);
  if (i >= B * H) return;
  long b = i / H, k = i % H;
  ACC in[3], hid[3];
  for (int q = 0; q < 3; q++) {
    in[q] = (ACC)OCL_AT(T, ig)[b * s_ig + q * H + k];
    hid[q] = (ACC)OCL_AT(T, hg)[b * s_hg + q * H + k];
    if (has_bias) {
      in[q] = in[q] + (ACC)OCL_AT(T, ib)[q * H + k];
      hid[q] = hid[q] + (ACC)OCL_AT(T, hb)[q * H + k];
    }
  }
  ACC r = SIGMOID(in[0] + hid[0]), z = SIGMOID(in[1] + hid[1]);
  ACC n = tanh(in[2] + r * hid[2]);
  ACC prev = (ACC)OCL_AT(T, hx)[b * s_hx + k];
  OCL_AT(T, hy)[i] = (T)(n + z * (prev - n));
  long w = b * 5 * H;
  OCL_AT(T, ws)[w + k] = (T)r;
  OCL_AT(T, ws)[w + H + k] = (T)z;
  OCL_AT(T, ws)[w + 2 * H + k] = (T)n;
  OCL_AT(T, ws)[w + 3 * H + k] = (T)prev;
  OCL_AT(T, ws)[w + 4 * H + k] = (T)hid[2];
}

/* the GRU's gradients from the workspace: grad_input_gates, grad_hidden_gates, grad_hx */
__kernel void tb_gru_backward(OCL_PTR(T, gi), OCL_PTR(T, gh), OCL_PTR(T, ghx), OCL_PTR(T, ghy),
                              OCL_PTR(T, ws), long B, long H, long s_ghy) {
  long i = get_global_id(0);
  if (i >= B * H) return;
  long b = i / H, k = i % H, w = b * 5 * H, d = b * 3 * H;
  ACC r = (ACC)OCL_AT(T, ws)[w + k], z = (ACC)OCL_AT(T, ws)[w + H + k];
  ACC n = (ACC)OCL_AT(T, ws)[w + 2 * H + k], prev = (ACC)OCL_AT(T, ws)[w + 3 * H + k];
  ACC hn = (ACC)OCL_AT(T, ws)[w + 4 * H + k];
  ACC g = (ACC)OCL_AT(T, ghy)[b * s_ghy + k];
  ACC grad_z = g * (prev - n) * ((ACC)1 - z) * z;
  ACC grad_n = g * ((ACC)1 - z) * ((ACC)1 - n * n);
  ACC grad_r = grad_n * hn * ((ACC)1 - r) * r;
  OCL_AT(T, gi)[d + k] = OCL_AT(T, gh)[d + k] = (T)grad_r;
  OCL_AT(T, gi)[d + H + k] = OCL_AT(T, gh)[d + H + k] = (T)grad_z;
  OCL_AT(T, gi)[d + 2 * H + k] = (T)grad_n;
  OCL_AT(T, gh)[d + 2 * H + k] = (T)(grad_n * r);
  OCL_AT(T, ghx)[i] = (T)(g * z);
}

/* sum[c] = the sum over the batch of column c of the contiguous [B, cols] x */
__kernel void tb_column_sums(OCL_PTR(T, sum), OCL_PTR(T, x), long B, long cols) {
  long c = get_global_id(0);
  if (c >= cols) return;
  ACC acc = 0;
  for (long b = 0; b < B; b++) acc += (ACC)OCL_AT(T, x)[b * cols + c];
  OCL_AT(T, sum)[c] = (T)acc;
}
