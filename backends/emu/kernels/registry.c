/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * emu's kernel table: every kernel file's list, flattened once into one array sized to fit
 * (no limit on the number of kernels).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "kernel.h"

static const tb_kernel **g_kernels;
static tb_kernel_api g_api;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build(void) {
  const tb_kernel *const *lists[] = {
      emu_elementwise_kernels, emu_reduce_kernels,   emu_softmax_kernels,  emu_blas_kernels,
      emu_index_kernels,       emu_norm_kernels,     emu_loss_kernels,     emu_random_kernels,
      emu_optim_kernels,       emu_copy_kernels,     emu_conv_kernels,     emu_rnn_kernels,
      emu_batchnorm_kernels,   emu_pooling_kernels,  emu_upsample_kernels, emu_shape_kernels,
      emu_attention_kernels,   emu_quantize_kernels, emu_sort_kernels};
  size_t count = 0;
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    for (const tb_kernel *const *k = lists[l]; *k != NULL; k++) count++;
  }
  g_kernels = malloc((count > 0 ? count : 1) * sizeof *g_kernels);
  if (g_kernels == NULL) {
    /* An empty table rather than a partial one: every operator then runs on the fallback. */
    fprintf(stderr, "emu: out of memory building the table of %zu kernels; publishing none\n",
            count);
    count = 0;
  }
  size_t n = 0;
  for (size_t l = 0; g_kernels != NULL && l < sizeof lists / sizeof lists[0]; l++) {
    for (const tb_kernel *const *k = lists[l]; *k != NULL; k++) g_kernels[n++] = *k;
  }
  g_api = (tb_kernel_api){sizeof(tb_kernel_api), (int64_t)count, g_kernels};
}

const tb_kernel_api *emu_kernel_api(void) {
  pthread_once(&g_once, build);
  return &g_api;
}

/* emu's extension chain: its custom operators (ABI 2.0), then its collectives (ABI 2.2,
 * collectives.c), then its graphs (ABI 2.3, vendor.c). */
static const tb_custom_op *const k_custom_ops[] = {&emu_op_mymuladd, &emu_op_mymuladd_backward,
                                                   &emu_op_rms_norm, &emu_op_rms_norm_backward};
static const tb_custom_ops_extension k_custom_ops_extension = {
    .base = {.struct_size = sizeof(tb_custom_ops_extension),
             .type = TB_EXTENSION_CUSTOM_OPS,
             .next = &emu_collectives.base},
    .count = sizeof k_custom_ops / sizeof k_custom_ops[0],
    .ops = k_custom_ops,
};

const tb_extension_base *emu_extensions(void) { return &k_custom_ops_extension.base; }
