/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * What the pointwise operator files (pointwise.c, activation.c) share.
 */
#ifndef TB_STANDIN_OPS_POINTWISE_H_
#define TB_STANDIN_OPS_POINTWISE_H_

#include "internal.h"

/* An element function computing `expr_f` on floating compute types and `expr_i` on the others,
 * from the inputs x[] and the executor's parameters ex->f[] / ex->i[]. */
#define PW_ELEM(name, expr_f, expr_i)                                                 \
  static sop_value name(const sop_value *x, bool is_float, const aclOpExecutor *ex) { \
    (void)ex;                                                                         \
    sop_value v;                                                                      \
    if (is_float) {                                                                   \
      v.f = (expr_f);                                                                 \
    } else {                                                                          \
      v.i = (expr_i);                                                                 \
    }                                                                                 \
    return v;                                                                         \
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
