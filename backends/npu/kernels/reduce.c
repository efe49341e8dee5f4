/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's reductions: sum.IntList_out -> aclnnReduceSum, mean.out -> aclnnMean, all.all_out and
 * all.out -> aclnnAll, linalg_vector_norm.out -> aclnnLinalgVectorNorm.  Translations: ATen's
 * "every dimension" (dim None, or an empty list) becomes the explicit list of dimensions, and
 * ATen's optional result dtype becomes the operators' dtype argument, which is out's type.
 */
#include <aclnnop/aclnn_all.h>
#include <aclnnop/aclnn_linalg_vector_norm.h>
#include <aclnnop/aclnn_mean.h>
#include <aclnnop/aclnn_reduce_sum.h>

#include "structured.h"

static bool arg_bool(const npu_call *c, int32_t k) { return npu_arg_int(c, k) != 0; }

/* sum.IntList_out: [self, dim?, keepdim, dtype?, out] */
static tb_status sum_out(npu_call *c) {
  const tb_tensor *self = npu_tensor_arg(c, 0), *out = npu_tensor_arg(c, 4);
  tb_status status = npu_require_dtype(c, self, NPU_ALL, "self");
  if (status == TB_OK) status = npu_require_dtype(c, out, NPU_ALL, "out");
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, ReduceSum, npu_tensor(c, 0), npu_dims_or_all(c, 1, self->ndim),
                   arg_bool(c, 2), npu_acl_dtype(out->dtype), npu_tensor(c, 4));
}

/* mean.out: [self, dim?, keepdim, dtype?, out] */
static tb_status mean_out(npu_call *c) {
  const tb_tensor *self = npu_tensor_arg(c, 0), *out = npu_tensor_arg(c, 4);
  tb_status status = npu_require_dtype(c, self, NPU_FLOATS, "self");
  if (status == TB_OK) status = npu_require_dtype(c, out, NPU_FLOATS, "out");
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, Mean, npu_tensor(c, 0), npu_dims_or_all(c, 1, self->ndim), arg_bool(c, 2),
                   npu_acl_dtype(out->dtype), npu_tensor(c, 4));
}

#define ALL_OUT_TYPES (NPU_BIT(TB_DTYPE_BOOL) | NPU_BIT(TB_DTYPE_UINT8))

/* all.all_out: [self, out] -> aclnnAll over [] (documented: every dimension) */
static tb_status all_all_out(npu_call *c) {
  tb_status status = npu_require_dtype(c, npu_tensor_arg(c, 1), ALL_OUT_TYPES, "out");
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, All, npu_tensor(c, 0), npu_int_array_of(c, NULL, 0), false, npu_tensor(c, 1));
}

/* all.out: [self, dim, keepdim, out] */
static tb_status all_dim_out(npu_call *c) {
  tb_status status = npu_require_dtype(c, npu_tensor_arg(c, 3), ALL_OUT_TYPES, "out");
  if (status != TB_OK) return status;
  const int64_t dim = npu_arg_int(c, 1);
  return NPU_ACLNN(c, All, npu_tensor(c, 0), npu_int_array_of(c, &dim, 1), arg_bool(c, 2),
                   npu_tensor(c, 3));
}

/* linalg_vector_norm.out: [self, ord, dim?, keepdim, dtype?, out] */
static tb_status vector_norm_out(npu_call *c) {
  const tb_tensor *self = npu_tensor_arg(c, 0), *out = npu_tensor_arg(c, 5);
  tb_status status = npu_require_dtype(c, self, NPU_FLOATS, "self");
  if (status == TB_OK) status = npu_require_dtype(c, out, NPU_FLOATS, "out");
  if (status != TB_OK) return status;
  return NPU_ACLNN(c, LinalgVectorNorm, npu_tensor(c, 0), npu_scalar(c, 1),
                   npu_dims_or_all(c, 2, self->ndim), arg_bool(c, 3), npu_acl_dtype(out->dtype),
                   npu_tensor(c, 5));
}

NPU_KERNEL(k_sum, "sum.IntList_out", sum_out, NPU_ALL,
           "sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? "
           "dtype=None, Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(k_mean, "mean.out", mean_out, NPU_FLOATS,
           "mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, "
           "Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(k_all_all, "all.all_out", all_all_out, NPU_ALL,
           "all.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(k_all_dim, "all.out", all_dim_out, NPU_ALL,
           "all.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)");
NPU_KERNEL(k_vector_norm, "linalg_vector_norm.out", vector_norm_out, NPU_FLOATS,
           "linalg_vector_norm.out(Tensor self, Scalar ord=2, int[1]? dim=None, bool "
           "keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)");

const tb_kernel *const npu_reduce_kernels[] = {&k_sum,     &k_mean,        &k_all_all,
                                               &k_all_dim, &k_vector_norm, NULL};
