/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The stand-in's optimizer operator: aclnnApplyAdamWV2 (hicann/ops-nn, aclnnApplyAdamWV2.md),
 * one AdamW step in place, on contiguous copies in double.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "aclnnop/aclnn_apply_adam_w_v2.h"
#include "dense.h"

typedef struct adamw_params {
  double lr, beta1, beta2, weight_decay, eps, step;
  bool amsgrad, maximize;
} adamw_params;

/* var, m, v (and max_v with amsgrad) updated in place from grad, n elements. */
static void adamw_step(double *var, double *m, double *v, double *max_v, const double *grad,
                       int64_t n, const adamw_params *p) {
  const double bias1 = 1 - pow(p->beta1, p->step), bias2 = 1 - pow(p->beta2, p->step);
  const double step_size = p->lr / bias1, bias2_sqrt = sqrt(bias2);
  const double decay = 1 - p->lr * p->weight_decay;
  for (int64_t i = 0; i < n; i++) {
    const double g = p->maximize ? -grad[i] : grad[i];
    m[i] = p->beta1 * m[i] + (1 - p->beta1) * g;
    v[i] = p->beta2 * v[i] + (1 - p->beta2) * g * g;
    double second = v[i];
    if (p->amsgrad) {
      if (max_v[i] > second) second = max_v[i];
      max_v[i] = second;
    }
    var[i] = var[i] * decay - step_size * m[i] / (sqrt(second) / bias2_sqrt + p->eps);
  }
}

/* Executor slots: 0 varRef, 1 mRef, 2 vRef, 3 maxGradNormOptionalRef (absent without amsgrad),
 * 4 grad, 5 step; f[0..4] lr, beta1, beta2, weightDecay, eps; i[0] amsgrad, i[1] maximize. */
static void run_adamw(aclOpExecutor *ex) {
  const int64_t n = sop_numel(&ex->t[0]);
  const bool amsgrad = ex->i[0] != 0;
  double *var = dense_load(ex, 0), *m = dense_load(ex, 1), *v = dense_load(ex, 2);
  double *max_v = amsgrad ? dense_load(ex, 3) : NULL;
  double *grad = dense_load(ex, 4), *step = dense_load(ex, 5);
  if (var == NULL || m == NULL || v == NULL || (amsgrad && max_v == NULL) || grad == NULL ||
      step == NULL) {
    dense_fail_memory();
  } else {
    const adamw_params p = {ex->f[0], ex->f[1], ex->f[2], ex->f[3],
                            ex->f[4], step[0],  amsgrad,  ex->i[1] != 0};
    adamw_step(var, m, v, max_v, grad, n, &p);
    dense_store(ex, 0, var);
    dense_store(ex, 1, m);
    dense_store(ex, 2, v);
    if (amsgrad) dense_store(ex, 3, max_v);
  }
  free(var);
  free(m);
  free(v);
  free(max_v);
  free(grad);
  free(step);
}

aclnnStatus aclnnApplyAdamWV2GetWorkspaceSize(aclTensor *varRef, aclTensor *mRef, aclTensor *vRef,
                                              aclTensor *maxGradNormOptionalRef,
                                              const aclTensor *grad, const aclTensor *step,
                                              float lr, float beta1, float beta2, float weightDecay,
                                              float eps, bool amsgrad, bool maximize,
                                              uint64_t *workspaceSize, aclOpExecutor **executor) {
  static const char op[] = "aclnnApplyAdamWV2";
  const uint64_t types = SOP_BIT(ACL_FLOAT) | SOP_BIT(ACL_FLOAT16) | SOP_BIT(ACL_BF16);
  SOP_CHECK(sop_check_nonnull(op, "varRef", varRef));
  SOP_CHECK(sop_check_nonnull(op, "mRef", mRef));
  SOP_CHECK(sop_check_nonnull(op, "vRef", vRef));
  if (amsgrad) SOP_CHECK(sop_check_nonnull(op, "maxGradNormOptionalRef", maxGradNormOptionalRef));
  SOP_CHECK(sop_check_nonnull(op, "grad", grad));
  SOP_CHECK(sop_check_nonnull(op, "step", step));
  const aclTensor *same[] = {mRef, vRef, grad, amsgrad ? maxGradNormOptionalRef : NULL};
  static const char *const same_args[] = {"mRef", "vRef", "grad", "maxGradNormOptionalRef"};
  SOP_CHECK(sop_check_tensor(op, "varRef", varRef, types));
  for (int k = 0; k < 4; k++) {
    if (same[k] == NULL) continue;
    SOP_CHECK(sop_check_tensor(op, same_args[k], same[k], types));
    SOP_CHECK(sop_check_same_shape(op, same_args[k], same[k], "varRef", varRef));
    if (same[k]->dtype != varRef->dtype) {
      return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "%s (%s) and varRef (%s) differ in type",
                      same_args[k], sop_dtype_name(same[k]->dtype), sop_dtype_name(varRef->dtype));
    }
  }
  SOP_CHECK(sop_check_tensor(op, "step", step, SOP_BIT(ACL_INT64) | SOP_BIT(ACL_FLOAT)));
  if (sop_numel(step) != 1) {
    return sop_fail(ACLNN_ERR_PARAM_INVALID, op, "step has %lld elements, not 1",
                    (long long)sop_numel(step));
  }
  aclOpExecutor *ex = sop_executor_new(op, 6, run_adamw);
  if (ex == NULL) return ACLNN_ERR_INNER;
  sop_capture(ex, 0, varRef);
  sop_capture(ex, 1, mRef);
  sop_capture(ex, 2, vRef);
  sop_capture(ex, 3, amsgrad ? maxGradNormOptionalRef : NULL);
  sop_capture(ex, 4, grad);
  sop_capture(ex, 5, step);
  ex->f[0] = lr;
  ex->f[1] = beta1;
  ex->f[2] = beta2;
  ex->f[3] = weightDecay;
  ex->f[4] = eps;
  ex->i[0] = amsgrad;
  ex->i[1] = maximize;
  return sop_finish(ex, 0, workspaceSize, executor);
}
SOP_PHASE_TWO(ApplyAdamWV2)
