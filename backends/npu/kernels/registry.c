/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's kernel table: every kernel file's NULL-terminated list (common.h), flattened once.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

static const tb_kernel **g_kernels;
static tb_kernel_api g_api;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build(void) {
  const tb_kernel *const *lists[] = {
      npu_pointwise_kernels, npu_blas_kernels,  npu_softmax_kernels,
      npu_reduce_kernels,    npu_index_kernels, npu_norm_kernels,
      npu_loss_kernels,      npu_optim_kernels, npu_attention_kernels};
  size_t count = 0;
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    for (const tb_kernel *const *k = lists[l]; *k != NULL; k++) count++;
  }
  g_kernels = malloc((count > 0 ? count : 1) * sizeof *g_kernels);
  if (g_kernels == NULL) {
    /* no table rather than a partial one: every operator then runs on the CPU fallback */
    fprintf(stderr, "npu: out of memory building the table of %zu kernels; publishing none\n",
            count);
    count = 0;
  }
  size_t n = 0;
  for (size_t l = 0; g_kernels != NULL && l < sizeof lists / sizeof lists[0]; l++) {
    for (const tb_kernel *const *k = lists[l]; *k != NULL; k++) g_kernels[n++] = *k;
  }
  g_api = (tb_kernel_api){sizeof(tb_kernel_api), (int64_t)count, g_kernels};
}

const tb_kernel_api *npu_kernel_api(void) {
  pthread_once(&g_once, build);
  return &g_api;
}
