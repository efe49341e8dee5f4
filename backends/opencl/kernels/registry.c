/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The opencl vendor's kernel table: every kernel file's list, flattened once.
 */
#include <pthread.h>
#include <stdlib.h>

#include "kernels.h"

static const tb_kernel **g_kernels; /* built once under g_once, then constant */
static tb_kernel_api g_api;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build(void) {
  const tb_kernel *const *lists[] = {
      ocl_elementwise_kernels, ocl_copy_kernels,  ocl_blas_kernels, ocl_reduce_kernels,
      ocl_gather_kernels,      ocl_optim_kernels, ocl_norm_kernels, ocl_shape_kernels,
      ocl_window_kernels,      ocl_rnn_kernels,   ocl_sort_kernels};
  size_t count = 0;
  for (size_t l = 0; l < sizeof lists / sizeof lists[0]; l++) {
    for (const tb_kernel *const *k = lists[l]; *k != NULL; k++) count++;
  }
  g_kernels = malloc((count > 0 ? count : 1) * sizeof *g_kernels);
  if (g_kernels == NULL) count = 0; /* no table rather than half of one: all on the fallback */
  size_t n = 0;
  for (size_t l = 0; g_kernels != NULL && l < sizeof lists / sizeof lists[0]; l++) {
    for (const tb_kernel *const *k = lists[l]; *k != NULL; k++) g_kernels[n++] = *k;
  }
  g_api = (tb_kernel_api){sizeof(tb_kernel_api), (int64_t)count, g_kernels};
}

const tb_kernel_api *ocl_kernel_api(void) {
  pthread_once(&g_once, build);
  return &g_api;
}
