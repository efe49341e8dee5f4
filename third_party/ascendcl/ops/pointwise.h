/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * What the pointwise operator files (pointwise.c, activation.c) share.
 */
#ifndef TB_STANDIN_OPS_POINTWISE_H_
#define TB_STANDIN_OPS_POINTWISE_H_

#include "internal.h"

/* An element function (sop_elem_fn) computing `expr_f` on floating compute types and `expr_i`
 * on the others, from element e's inputs x[] and the executor's parameters ex->f[] / ex->i[]:
 * one loop per representation, which the compiler specialises for the expressions. */
#define PW_ELEM(name, expr_f, expr_i)                                                             \
  static void name(sop_value *out, const sop_value *in, int32_t stride, int64_t n, bool is_float, \
                   const aclOpExecutor *ex) {                                                     \
    (void)ex;                                                                                     \
    if (is_float) {                                                                               \
      for (int64_t e = 0; e < n; e++) {                                                           \
        const sop_value *x = in + e * stride;                                                     \
        (void)x;                                                                                  \
        out[e].f = (expr_f);                                                                      \
      }                                                                                           \
    } else {                                                                                      \
      for (int64_t e = 0; e < n; e++) {                                                           \
        const sop_value *x = in + e * stride;                                                     \
        (void)x;                                                                                  \
        out[e].i = (expr_i);                                                                      \
      }                                                                                           \
    }                                                                                             \
  }

/* An element function (sop_elem_fn) from `one`, a static function computing one element:
 * sop_value one(const sop_value *x, bool is_float, const aclOpExecutor *ex). */
#define PW_ELEM_OF(name, one)                                                                     \
  static void name(sop_value *out, const sop_value *in, int32_t stride, int64_t n, bool is_float, \
                   const aclOpExecutor *ex) {                                                     \
    for (int64_t e = 0; e < n; e++) out[e] = one(in + e * stride, is_float, ex);                  \
  }

/* Phase one of a pointwise operator (sop_pointwise_op) with its scalar parameters stored into
 * ex->f[k] / ex->i[k] (NULL ones skipped; each must cast to the compute type when
 * `cast_params`), then sop_finish. */
typedef struct pw_param {
  const char *arg;
  const aclScalar *s;
} pw_param;
aclnnStatus pw_run(const sop_pointwise_spec *spec, const char *out_arg, const aclTensor *out,
                   int32_t n, const sop_operand *in, const pw_param *params, int32_t num_params,
                   bool cast_params, uint64_t *workspaceSize, aclOpExecutor **executor);

#endif /* TB_STANDIN_OPS_POINTWISE_H_ */
