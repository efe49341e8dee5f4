/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * C tests of the stand-in's pointwise aclnn operators: each operator's results on small inputs
 * (with broadcasting, a non-contiguous view, the dtypes it documents) against values computed
 * here, and its phase-one errors.
 */
#include <math.h>

#include "aclnnop/aclnn_abs.h"
#include "aclnnop/aclnn_addcdiv.h"
#include "aclnnop/aclnn_addcmul.h"
#include "aclnnop/aclnn_arange.h"
#include "aclnnop/aclnn_bernoulli.h"
#include "aclnnop/aclnn_bitwise_and_scalar.h"
#include "aclnnop/aclnn_bitwise_and_tensor.h"
#include "aclnnop/aclnn_ceil.h"
#include "aclnnop/aclnn_clamp.h"
#include "aclnnop/aclnn_copy.h"
#include "aclnnop/aclnn_cos.h"
#include "aclnnop/aclnn_div.h"
#include "aclnnop/aclnn_eq_scalar.h"
#include "aclnnop/aclnn_erf.h"
#include "aclnnop/aclnn_exp.h"
#include "aclnnop/aclnn_expm1.h"
#include "aclnnop/aclnn_fill_scalar.h"
#include "aclnnop/aclnn_floor.h"
#include "aclnnop/aclnn_ge_tensor.h"
#include "aclnnop/aclnn_gelu.h"
#include "aclnnop/aclnn_gelu_backward_v2.h"
#include "aclnnop/aclnn_gelu_v2.h"
#include "aclnnop/aclnn_isneginf.h"
#include "aclnnop/aclnn_lerp_scalar.h"
#include "aclnnop/aclnn_lerp_tensor.h"
#include "aclnnop/aclnn_log.h"
#include "aclnnop/aclnn_log1p.h"
#include "aclnnop/aclnn_log2.h"
#include "aclnnop/aclnn_logical_not.h"
#include "aclnnop/aclnn_lt_scalar.h"
#include "aclnnop/aclnn_masked_fill_scalar.h"
#include "aclnnop/aclnn_maximum.h"
#include "aclnnop/aclnn_minimum.h"
#include "aclnnop/aclnn_mul.h"
#include "aclnnop/aclnn_neg.h"
#include "aclnnop/aclnn_pow.h"
#include "aclnnop/aclnn_reciprocal.h"
#include "aclnnop/aclnn_relu.h"
#include "aclnnop/aclnn_rsqrt.h"
#include "aclnnop/aclnn_rsub.h"
#include "aclnnop/aclnn_s_where.h"
#include "aclnnop/aclnn_sigmoid.h"
#include "aclnnop/aclnn_sigmoid_backward.h"
#include "aclnnop/aclnn_silu.h"
#include "aclnnop/aclnn_silu_backward.h"
#include "aclnnop/aclnn_sqrt.h"
#include "aclnnop/aclnn_sub.h"
#include "aclnnop/aclnn_tan.h"
#include "aclnnop/aclnn_tanh.h"
#include "aclnnop/aclnn_tanh_backward.h"
#include "aclnnop/aclnn_threshold_backward.h"
#include "aclnnop/aclnn_tril.h"
#include "aclnnop/aclnn_trunc.h"
#include "aclnnop/aclnn_uniform.h"
#include "test_util.h"

#define PI 3.141592653589793
#define V(...) ((double[]){__VA_ARGS__})
#define D(...) ((int64_t[]){__VA_ARGS__})

static double sig(double x) { return 1 / (1 + exp(-x)); }

static void test_arithmetic(void) {
  double r[8];
  tu_tensor a = tu_make(ACL_FLOAT, 2, D(2, 2), V(1, -2, 3, 8));
  tu_tensor b = tu_make(ACL_FLOAT, 1, D(2), V(2, 4));
  tu_tensor o = tu_make(ACL_FLOAT, 2, D(2, 2), NULL);
  tu_tensor i32 = tu_make(ACL_INT32, 2, D(2, 2), V(7, -7, 9, 1));
  tu_tensor i32b = tu_make(ACL_INT32, 1, D(2), V(2, 4));
  tu_tensor io = tu_make(ACL_INT32, 2, D(2, 2), NULL);
  tu_tensor bo = tu_make(ACL_BOOL, 2, D(2, 2), NULL);
  aclScalar *three = tu_scalar_i(ACL_INT64, 3), *half = tu_scalar_f(ACL_DOUBLE, 0.5);
  aclScalar *two_f = tu_scalar_f(ACL_FLOAT, 2);
  aclScalar *one_f = tu_scalar_f(ACL_FLOAT, 1);

  TU_RUN(Mul, a.t, b.t, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[1], -8, 0);
  CHECK_NEAR(r[3], 32, 0);
  TU_RUN(Muls, i32.t, three, io.t);
  tu_read(&io, r);
  CHECK_NEAR(r[1], -21, 0);
  TU_RUN(InplaceMuls, a.t, half);
  tu_read(&a, r);
  CHECK_NEAR(r[3], 4, 0);
  /* true division: integers compute in float, which an integer out cannot hold */
  TU_RUN(Div, i32.t, i32b.t, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[0], 3.5, 0);
  CHECK_NEAR(r[1], -1.75, 0);
  TU_EXPECT(Div, ACLNN_ERR_PARAM_INVALID, "cannot be stored into out", i32.t, i32b.t, io.t);
  TU_RUN(Divs, a.t, two_f, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[0], 0.25, 0);
  TU_EXPECT(Divs, ACLNN_ERR_PARAM_NULLPTR, "other is a null pointer", a.t, NULL, o.t);

  /* sub with alpha; bool is not a type of sub */
  TU_RUN(Sub, i32.t, i32b.t, three, io.t);
  tu_read(&io, r);
  CHECK_NEAR(r[0], 1, 0);
  CHECK_NEAR(r[3], -11, 0);
  TU_EXPECT(Sub, ACLNN_ERR_PARAM_INVALID, "not supported", bo.t, bo.t, three, bo.t);

  /* addcmul / addcdiv, tensor1 and tensor2 broadcast */
  tu_tensor x = tu_make(ACL_FLOAT, 2, D(2, 2), V(1, 1, 1, 1));
  TU_RUN(Addcmul, x.t, b.t, b.t, half, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[0], 3, 0);
  CHECK_NEAR(r[3], 9, 0);
  TU_RUN(Addcdiv, x.t, x.t, b.t, half, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[1], 1.125, 0);
  TU_EXPECT(Addcdiv, ACLNN_ERR_PARAM_INVALID, "not supported", i32.t, i32.t, i32.t, three, io.t);
  TU_EXPECT(Addcmul, ACLNN_ERR_PARAM_NULLPTR, "value is a null pointer", x.t, b.t, b.t, NULL, o.t);
  TU_EXPECT(Addcmul, ACLNN_ERR_PARAM_INVALID, "value (ACL_DOUBLE) cannot be cast", i32.t, i32.t,
            i32.t, half, io.t);

  /* lerp with a scalar and with a tensor weight */
  tu_tensor e = tu_make(ACL_FLOAT, 2, D(2, 2), V(3, 5, 7, 9));
  TU_RUN(Lerps, x.t, e.t, half, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[0], 2, 0);
  CHECK_NEAR(r[3], 5, 0);
  tu_tensor w = tu_make(ACL_FLOAT, 1, D(2), V(0, 1));
  TU_RUN(Lerp, x.t, e.t, w.t, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[0], 1, 0);
  CHECK_NEAR(r[1], 5, 0);
  TU_EXPECT(Lerps, ACLNN_ERR_PARAM_NULLPTR, "weight", x.t, e.t, NULL, o.t);

  /* pow: float, and integers (a negative integer power of an integer truncates) */
  TU_RUN(PowTensorScalar, e.t, two_f, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[1], 25, 0);
  aclScalar *ten = tu_scalar_i(ACL_INT64, 10), *minus_one = tu_scalar_i(ACL_INT64, -1);
  tu_tensor base = tu_make(ACL_INT64, 1, D(4), V(2, -1, 1, 3));
  tu_tensor po = tu_make(ACL_INT64, 1, D(4), NULL);
  TU_RUN(PowTensorScalar, base.t, ten, po.t);
  tu_read(&po, r);
  CHECK_NEAR(r[0], 1024, 0);
  CHECK_NEAR(r[3], 59049, 0);
  TU_RUN(PowTensorScalar, base.t, minus_one, po.t);
  tu_read(&po, r);
  CHECK_NEAR(r[0], 0, 0);
  CHECK_NEAR(r[1], -1, 0);
  CHECK_NEAR(r[2], 1, 0);
  /* rsub: 2 - 1 * [3, 5, 7, 9] */
  TU_RUN(Rsubs, e.t, two_f, one_f, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[0], -1, 0);
  CHECK_NEAR(r[3], -7, 0);
  TU_EXPECT(Rsubs, ACLNN_ERR_PARAM_NULLPTR, "other", e.t, NULL, one_f, o.t);
  /* pow with a scalar base: 2 ** [3, 5, 7, 9] */
  TU_RUN(PowScalarTensor, two_f, e.t, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[0], 8, 0);
  CHECK_NEAR(r[3], 512, 0);
  TU_EXPECT(PowScalarTensor, ACLNN_ERR_PARAM_NULLPTR, "self", NULL, e.t, o.t);

  tu_tensor *all[] = {&a, &b, &o, &i32, &i32b, &io, &bo, &x, &e, &w, &base, &po};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
  aclScalar *scalars[] = {three, half, two_f, one_f, ten, minus_one};
  for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++) aclDestroyScalar(scalars[k]);
}

static void test_select(void) {
  double r[8];
  tu_tensor x = tu_make(ACL_FLOAT, 1, D(4), V(-2, NAN, 0.5, 7));
  tu_tensor o = tu_make(ACL_FLOAT, 1, D(4), NULL);
  tu_tensor bo = tu_make(ACL_BOOL, 1, D(4), NULL);
  aclScalar *lo = tu_scalar_f(ACL_DOUBLE, -1), *hi = tu_scalar_i(ACL_INT64, 1);

  /* clamp: NaN propagates; either bound alone; not both missing */
  TU_RUN(Clamp, x.t, lo, hi, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[0], -1, 0);
  CHECK(r[1] != r[1]);
  CHECK_NEAR(r[2], 0.5, 0);
  CHECK_NEAR(r[3], 1, 0);
  TU_RUN(Clamp, x.t, NULL, hi, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[0], -2, 0);
  TU_EXPECT(Clamp, ACLNN_ERR_PARAM_NULLPTR, "both null", x.t, NULL, NULL, o.t);
  TU_RUN(ClampMin, x.t, lo, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[0], -1, 0);
  CHECK_NEAR(r[3], 7, 0);
  tu_tensor m = tu_make(ACL_FLOAT, 2, D(2, 1), V(0, 100));
  tu_tensor o2 = tu_make(ACL_FLOAT, 2, D(2, 4), NULL);
  TU_RUN(ClampMinTensor, x.t, m.t, o2.t);
  double r8[8];
  tu_read(&o2, r8);
  CHECK_NEAR(r8[0], 0, 0);
  CHECK(r8[1] != r8[1]);
  CHECK_NEAR(r8[3], 7, 0);
  CHECK_NEAR(r8[7], 100, 0);

  /* comparisons: bool results, NaN compares false, any out type */
  aclScalar *seven = tu_scalar_i(ACL_INT64, 7);
  TU_RUN(EqScalar, x.t, seven, bo.t);
  tu_read(&bo, r);
  CHECK(r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 1);
  TU_RUN(LtScalar, x.t, seven, o.t);
  tu_read(&o, r);
  CHECK(r[0] == 1 && r[1] == 0 && r[2] == 1 && r[3] == 0);
  tu_tensor zero = tu_make(ACL_INT32, 1, D(1), V(0));
  TU_RUN(GeTensor, x.t, zero.t, bo.t);
  tu_read(&bo, r);
  CHECK(r[0] == 0 && r[1] == 0 && r[2] == 1 && r[3] == 1);
  TU_EXPECT(GeTensor, ACLNN_ERR_PARAM_INVALID, "broadcast", x.t, m.t, bo.t);

  /* bitwise and */
  tu_tensor i = tu_make(ACL_INT16, 1, D(4), V(12, 10, -1, 0));
  tu_tensor j = tu_make(ACL_INT16, 1, D(4), V(10, 6, 5, 3));
  tu_tensor io = tu_make(ACL_INT16, 1, D(4), NULL);
  TU_RUN(BitwiseAndTensor, i.t, j.t, io.t);
  tu_read(&io, r);
  CHECK(r[0] == 8 && r[1] == 2 && r[2] == 5 && r[3] == 0);
  TU_RUN(BitwiseAndScalar, i.t, seven, io.t);
  tu_read(&io, r);
  CHECK(r[0] == 4 && r[1] == 2 && r[2] == 7);
  TU_EXPECT(BitwiseAndTensor, ACLNN_ERR_PARAM_INVALID, "not supported", x.t, x.t, o.t);
  TU_EXPECT(BitwiseAndScalar, ACLNN_ERR_PARAM_INVALID, "other has dtype ACL_DOUBLE", i.t, lo, io.t);

  /* where, the condition broadcast; masked fill, the mask broadcast */
  tu_tensor cond = tu_make(ACL_BOOL, 2, D(2, 1), V(1, 0));
  TU_RUN(SWhere, cond.t, x.t, m.t, o2.t);
  tu_read(&o2, r8);
  CHECK_NEAR(r8[0], -2, 0);
  CHECK_NEAR(r8[3], 7, 0);
  CHECK_NEAR(r8[4], 100, 0);
  TU_EXPECT(SWhere, ACLNN_ERR_PARAM_INVALID, "condition has dtype ACL_FLOAT", x.t, x.t, x.t, o.t);
  tu_tensor mask = tu_make(ACL_BOOL, 1, D(4), V(1, 1, 0, 0));
  tu_tensor it = tu_make(ACL_INT32, 2, D(2, 4), V(1, 2, 3, 4, 5, 6, 7, 8));
  aclScalar *fill = tu_scalar_f(ACL_DOUBLE, -9.75);
  TU_RUN(InplaceMaskedFillScalar, it.t, mask.t, fill);
  tu_read(&it, r8);
  CHECK(r8[0] == -9 && r8[1] == -9 && r8[2] == 3 && r8[4] == -9 && r8[7] == 8);
  TU_EXPECT(InplaceMaskedFillScalar, ACLNN_ERR_PARAM_INVALID, "mask has dtype", it.t, x.t, fill);

  tu_tensor *all[] = {&x, &o, &bo, &m, &o2, &zero, &i, &j, &io, &cond, &mask, &it};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
  aclDestroyScalar(lo);
  aclDestroyScalar(hi);
  aclDestroyScalar(seven);
  aclDestroyScalar(fill);
}

static void test_copy_fill(void) {
  double r[8];
  /* copy converts (float to int truncates), from a transposed view, and broadcasts */
  tu_tensor f = tu_make(ACL_FLOAT, 2, D(2, 3), V(1.9, -2.5, 3, 4, 5, 6.5));
  tu_tensor ft = tu_view(&f, 2, D(3, 2), D(1, 3), 0);
  tu_tensor i = tu_make(ACL_INT64, 2, D(3, 2), NULL);
  TU_RUN(InplaceCopy, i.t, ft.t);
  tu_read(&i, r);
  CHECK(r[0] == 1 && r[1] == 4 && r[2] == -2 && r[3] == 5 && r[4] == 3 && r[5] == 6);
  tu_tensor row = tu_make(ACL_BF16, 1, D(2), V(0.5, -8));
  TU_RUN(InplaceCopy, i.t, row.t);
  tu_read(&i, r);
  CHECK(r[0] == 0 && r[1] == -8 && r[4] == 0 && r[5] == -8);
  tu_tensor h = tu_make(ACL_FLOAT16, 2, D(2, 3), NULL);
  TU_RUN(InplaceCopy, h.t, f.t);
  tu_read(&h, r);
  CHECK_NEAR(r[0], 1.900390625, 0); /* 1.9 in float16 */
  TU_EXPECT(InplaceCopy, ACLNN_ERR_PARAM_INVALID, "does not broadcast", i.t, f.t);
  TU_EXPECT(InplaceCopy, ACLNN_ERR_PARAM_NULLPTR, "src is a null pointer", i.t, NULL);

  /* fill a strided view, converting the value */
  tu_tensor col = tu_view(&f, 1, D(2), D(3), 1);
  aclScalar *v = tu_scalar_i(ACL_INT64, 42), *b = tu_scalar_i(ACL_BOOL, 1);
  TU_RUN(InplaceFillScalar, col.t, v);
  tu_read(&f, r);
  CHECK(r[1] == 42 && r[4] == 42 && r[0] == (double)1.9f);
  tu_tensor bo = tu_make(ACL_BOOL, 1, D(3), NULL);
  TU_RUN(InplaceFillScalar, bo.t, v);
  tu_read(&bo, r);
  CHECK(r[0] == 1 && r[2] == 1);
  TU_EXPECT(InplaceFillScalar, ACLNN_ERR_PARAM_NULLPTR, "value is a null pointer", bo.t, NULL);

  tu_tensor *all[] = {&ft, &col, &f, &i, &row, &h, &bo};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
  aclDestroyScalar(v);
  aclDestroyScalar(b);
}

static void test_activations(void) {
  double r[8];
  const double in[4] = {-1.5, 0, 0.25, 2};
  tu_tensor x = tu_make(ACL_FLOAT, 1, D(4), in);
  tu_tensor o = tu_make(ACL_FLOAT, 1, D(4), NULL);
  tu_tensor i = tu_make(ACL_INT32, 1, D(4), V(4, 9, 16, 0));
  tu_tensor io = tu_make(ACL_INT32, 1, D(4), NULL);
  tu_tensor bo = tu_make(ACL_BOOL, 1, D(4), NULL);
  /* integer inputs of float functions compute in float; an integer out cannot hold that */
  TU_RUN(Sqrt, i.t, o.t);
  tu_read(&o, r);
  CHECK(r[0] == 2 && r[1] == 3 && r[2] == 4);
  TU_EXPECT(Sqrt, ACLNN_ERR_PARAM_INVALID, "cannot be stored", i.t, io.t);
  TU_RUN(Rsqrt, i.t, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[0], 0.5, 0);
  CHECK(isinf(r[3]));
  TU_RUN(Tanh, x.t, o.t);
  tu_read(&o, r);
  for (int k = 0; k < 4; k++) CHECK_NEAR(r[k], tanh(in[k]), 1e-7);
  TU_RUN(Silu, x.t, o.t);
  tu_read(&o, r);
  for (int k = 0; k < 4; k++) CHECK_NEAR(r[k], in[k] * sig(in[k]), 1e-7);
  TU_RUN(Gelu, x.t, o.t);
  tu_read(&o, r);
  for (int k = 0; k < 4; k++) CHECK_NEAR(r[k], 0.5 * in[k] * (1 + erf(in[k] / sqrt(2))), 1e-7);
  TU_RUN(GeluV2, x.t, 1, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[3], 0.5 * 2 * (1 + tanh(sqrt(2 / PI) * (2 + 0.044715 * 8))), 1e-7);
  TU_EXPECT(GeluV2, ACLNN_ERR_PARAM_INVALID, "approximate is 2", x.t, 2, o.t);
  TU_EXPECT(Silu, ACLNN_ERR_PARAM_INVALID, "not supported", i.t, io.t);
  TU_RUN(Neg, i.t, io.t);
  tu_read(&io, r);
  CHECK(r[0] == -4 && r[3] == 0);
  TU_EXPECT(Neg, ACLNN_ERR_PARAM_INVALID, "not supported", bo.t, bo.t);
  tu_tensor n = tu_make(ACL_DOUBLE, 1, D(4), V(-INFINITY, NAN, -3, INFINITY));
  tu_tensor no = tu_make(ACL_DOUBLE, 1, D(4), NULL);
  TU_RUN(Relu, n.t, no.t);
  tu_read(&no, r);
  CHECK(r[0] == 0 && r[1] != r[1] && r[2] == 0 && isinf(r[3]));
  TU_RUN(InplaceRelu, x.t);
  tu_read(&x, r);
  CHECK(r[0] == 0 && r[3] == 2);
  TU_RUN(IsNegInf, n.t, bo.t);
  tu_read(&bo, r);
  CHECK(r[0] == 1 && r[1] == 0 && r[2] == 0 && r[3] == 0);
  TU_RUN(IsNegInf, i.t, bo.t);
  tu_read(&bo, r);
  CHECK(r[0] == 0);

  /* backwards: gradOutput 2 everywhere */
  tu_tensor g = tu_make(ACL_FLOAT, 1, D(4), V(2, 2, 2, 2));
  tu_tensor s = tu_make(ACL_FLOAT, 1, D(4), in);
  TU_RUN(TanhBackward, g.t, s.t, o.t);
  tu_read(&o, r);
  for (int k = 0; k < 4; k++) CHECK_NEAR(r[k], 2 * (1 - in[k] * in[k]), 1e-6);
  TU_RUN(SiluBackward, g.t, s.t, o.t);
  tu_read(&o, r);
  for (int k = 0; k < 4; k++) {
    CHECK_NEAR(r[k], 2 * sig(in[k]) * (1 + in[k] * (1 - sig(in[k]))), 1e-6);
  }
  char none[] = "none", tanh_mode[] = "tanh", bad[] = "erf";
  TU_RUN(GeluBackwardV2, g.t, s.t, none, o.t);
  tu_read(&o, r);
  for (int k = 0; k < 4; k++) {
    double want = 0.5 * (1 + erf(in[k] / sqrt(2))) + in[k] * exp(-in[k] * in[k] / 2) / sqrt(2 * PI);
    CHECK_NEAR(r[k], 2 * want, 1e-6);
  }
  TU_RUN(GeluBackwardV2, g.t, s.t, tanh_mode, o.t);
  tu_read(&o, r);
  CHECK_NEAR(r[1], 1, 1e-7); /* gelu'(0) = 0.5 in both forms */
  TU_EXPECT(GeluBackwardV2, ACLNN_ERR_PARAM_INVALID, "\"erf\"", g.t, s.t, bad, o.t);
  TU_EXPECT(GeluBackwardV2, ACLNN_ERR_PARAM_NULLPTR, "approximate", g.t, s.t, NULL, o.t);
  aclScalar *th = tu_scalar_f(ACL_DOUBLE, 0.25);
  TU_RUN(ThresholdBackward, g.t, s.t, th, o.t);
  tu_read(&o, r);
  CHECK(r[0] == 0 && r[1] == 0 && r[2] == 0 && r[3] == 2);
  TU_EXPECT(ThresholdBackward, ACLNN_ERR_PARAM_NULLPTR, "threshold", g.t, s.t, NULL, o.t);
  TU_EXPECT(TanhBackward, ACLNN_ERR_PARAM_NULLPTR, "gradOutput", NULL, s.t, o.t);

  tu_tensor *all[] = {&x, &o, &i, &io, &bo, &n, &no, &g, &s};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
  aclDestroyScalar(th);
}

static void test_random_layout(void) {
  enum { N = 4096 };
  double *r = malloc(N * sizeof *r), *r2 = malloc(N * sizeof *r2);
  tu_tensor x = tu_make(ACL_FLOAT, 1, D(N), NULL);
  aclScalar *p = tu_scalar_f(ACL_DOUBLE, 0.25), *zero = tu_scalar_f(ACL_FLOAT, 0);
  aclScalar *one = tu_scalar_f(ACL_DOUBLE, 1), *bad = tu_scalar_f(ACL_DOUBLE, 1.5);
  TU_RUN(InplaceBernoulli, x.t, p, 1234, 0);
  tu_read(&x, r);
  double sum = 0;
  for (int k = 0; k < N; k++) {
    CHECK(r[k] == 0 || r[k] == 1);
    sum += r[k];
  }
  CHECK(sum > N * 0.25 - 150 && sum < N * 0.25 + 150); /* 5 standard deviations */
  TU_RUN(InplaceBernoulli, x.t, p, 1234, 0); /* the same key and counter: the same draws */
  tu_read(&x, r2);
  CHECK(memcmp(r, r2, N * sizeof *r) == 0);
  TU_RUN(InplaceBernoulli, x.t, p, 1234, 4 * N); /* the next counters: other draws */
  tu_read(&x, r2);
  CHECK(memcmp(r, r2, N * sizeof *r) != 0);
  TU_RUN(InplaceBernoulli, x.t, zero, 1, 0);
  tu_read(&x, r);
  CHECK(r[0] == 0 && r[N - 1] == 0);
  TU_RUN(InplaceBernoulli, x.t, one, 1, 0);
  tu_read(&x, r);
  CHECK(r[0] == 1 && r[N - 1] == 1);
  TU_EXPECT(InplaceBernoulli, ACLNN_ERR_PARAM_INVALID, "[0, 1]", x.t, bad, 1, 0);
  aclScalar *int_p = tu_scalar_i(ACL_INT64, 1);
  TU_EXPECT(InplaceBernoulli, ACLNN_ERR_PARAM_INVALID, "prob has dtype ACL_INT64", x.t, int_p, 1,
            0);

  /* uniform draws lie in [from, to); Bernoulli's draws are the uniform numbers of [0, 1) of the
   * same key and counter compared with prob */
  tu_tensor u = tu_make(ACL_DOUBLE, 1, D(N), NULL), b = tu_make(ACL_FLOAT, 1, D(N), NULL);
  tu_tensor ui = tu_make(ACL_INT32, 1, D(N), NULL), ub = tu_make(ACL_BOOL, 1, D(N), NULL);
  TU_RUN(InplaceUniform, u.t, -2.0, 3.0, 77, 12);
  tu_read(&u, r);
  double mean = 0;
  int inside = 1;
  for (int k = 0; k < N; k++) {
    inside &= r[k] >= -2.0 && r[k] < 3.0;
    mean += r[k] / N;
  }
  CHECK(inside);
  CHECK(mean > 0.5 - 0.15 && mean < 0.5 + 0.15);
  TU_RUN(InplaceUniform, ui.t, 0.0, 10.0, 77, 12);
  TU_RUN(InplaceUniform, u.t, 0.0, 1.0, 77, 12);
  tu_read(&ui, r2);
  tu_read(&u, r);
  int integers = 1;
  for (int k = 0; k < N; k++) integers &= r2[k] == floor(r[k] * 10.0) && r2[k] < 10;
  CHECK(integers);
  TU_RUN(InplaceUniform, u.t, 0.0, 1.0, 1234, 8);
  TU_RUN(InplaceBernoulli, b.t, p, 1234, 8);
  tu_read(&u, r);
  tu_read(&b, r2);
  int agree = 1;
  for (int k = 0; k < N; k++) agree &= (r[k] < 0.25) == (r2[k] == 1);
  CHECK(agree);
  /* the Tensor form reads its key and base counter from device memory when it runs: a captured
   * one (acl_mdl.h) draws afresh at every run of its model when they change in between */
  tu_tensor seed = tu_make_raw(ACL_UINT64, 1, D(1)), base = tu_make_raw(ACL_UINT64, 1, D(1));
  tu_tensor u2 = tu_make(ACL_DOUBLE, 1, D(N), NULL);
  uint64_t key = 1234, counter = 5;
  CHECK(aclrtMemcpy(seed.dev, 8, &key, 8, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
  CHECK(aclrtMemcpy(base.dev, 8, &counter, 8, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
  TU_RUN(InplaceUniformTensor, u2.t, 0.0, 1.0, seed.t, base.t, 3); /* counter 5 + 3 */
  tu_read(&u2, r2);
  CHECK(memcmp(r, r2, N * sizeof *r) == 0);
  aclrtStream cs = NULL;
  aclmdlRI model = NULL;
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  CHECK(aclrtCreateStream(&cs) == ACL_SUCCESS);
  CHECK(aclmdlRICaptureBegin(cs, ACL_MODEL_RI_CAPTURE_MODE_GLOBAL) == ACL_SUCCESS);
  CHECK(aclnnInplaceUniformTensorGetWorkspaceSize(u2.t, 0.0, 1.0, seed.t, base.t, 3, &ws, &ex) ==
        ACLNN_SUCCESS);
  CHECK(ws == 0 && aclnnInplaceUniformTensor(NULL, 0, ex, cs) == ACLNN_SUCCESS);
  CHECK(aclmdlRICaptureEnd(cs, &model) == ACL_SUCCESS);
  for (int run = 0; run < 2; run++) {
    key = 77 + (uint64_t)run;
    counter = (uint64_t)run * 4 * N;
    CHECK(aclrtMemcpy(seed.dev, 8, &key, 8, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
    CHECK(aclrtMemcpy(base.dev, 8, &counter, 8, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
    CHECK(aclmdlRIExecuteAsync(model, cs) == ACL_SUCCESS);
    CHECK(aclrtSynchronizeStream(cs) == ACL_SUCCESS);
    TU_RUN(InplaceUniform, u.t, 0.0, 1.0, key, counter + 3);
    tu_read(&u, r);
    tu_read(&u2, r2);
    CHECK(memcmp(r, r2, N * sizeof *r) == 0);
  }
  CHECK(aclmdlRIDestroy(model) == ACL_SUCCESS);
  CHECK(aclrtDestroyStream(cs) == ACL_SUCCESS);
  TU_EXPECT(InplaceUniform, ACLNN_ERR_PARAM_INVALID, "must not exceed", u.t, 2.0, 1.0, 1, 0);
  TU_EXPECT(InplaceUniform, ACLNN_ERR_PARAM_INVALID, "selfRef has dtype ACL_BOOL", ub.t, 0.0, 1.0,
            1, 0);
  TU_EXPECT(InplaceUniformTensor, ACLNN_ERR_PARAM_NULLPTR, "seedTensor", u.t, 0.0, 1.0, NULL,
            base.t, 0);
  TU_EXPECT(InplaceUniformTensor, ACLNN_ERR_PARAM_INVALID, "offsetTensor has dtype ACL_DOUBLE", u.t,
            0.0, 1.0, seed.t, u.t, 0);
  tu_tensor two = tu_make_raw(ACL_UINT64, 1, D(2));
  TU_EXPECT(InplaceUniformTensor, ACLNN_ERR_PARAM_INVALID, "has 2 elements", u.t, 0.0, 1.0, two.t,
            base.t, 0);
  tu_tensor *uniform[] = {&u, &b, &ui, &ub, &seed, &base, &u2, &two};
  for (size_t k = 0; k < sizeof uniform / sizeof uniform[0]; k++) tu_free(uniform[k]);

  /* tril of a batch of 2 x 3 matrices */
  double m[12];
  for (int k = 0; k < 12; k++) m[k] = k + 1;
  tu_tensor t = tu_make(ACL_INT32, 3, D(2, 2, 3), m);
  tu_tensor to = tu_make(ACL_INT32, 3, D(2, 2, 3), NULL);
  TU_RUN(Tril, t.t, 0, to.t);
  tu_read(&to, r);
  CHECK(r[0] == 1 && r[1] == 0 && r[2] == 0 && r[3] == 4 && r[4] == 5 && r[5] == 0);
  CHECK(r[6] == 7 && r[7] == 0 && r[9] == 10 && r[10] == 11 && r[11] == 0);
  TU_RUN(Tril, t.t, -1, to.t);
  tu_read(&to, r);
  CHECK(r[0] == 0 && r[3] == 4 && r[4] == 0);
  tu_tensor vec = tu_make(ACL_INT32, 1, D(3), NULL);
  TU_EXPECT(Tril, ACLNN_ERR_PARAM_INVALID, "at least 2", vec.t, 0, vec.t);
  tu_tensor tf = tu_make(ACL_FLOAT, 3, D(2, 2, 3), NULL);
  TU_EXPECT(Tril, ACLNN_ERR_PARAM_INVALID, "differ in dtype", t.t, 0, tf.t);

  /* arange */
  aclScalar *s0 = tu_scalar_i(ACL_INT64, 1), *s1 = tu_scalar_i(ACL_INT64, 10);
  aclScalar *s2 = tu_scalar_i(ACL_INT64, 3), *sf = tu_scalar_f(ACL_DOUBLE, -0.5);
  aclScalar *z = tu_scalar_i(ACL_INT64, 0);
  tu_tensor ar = tu_make(ACL_INT64, 1, D(3), NULL);
  TU_RUN(Arange, s0, s1, s2, ar.t);
  tu_read(&ar, r);
  CHECK(r[0] == 1 && r[1] == 4 && r[2] == 7);
  tu_tensor af = tu_make(ACL_FLOAT, 1, D(18), NULL);
  TU_RUN(Arange, s1, s0, sf, af.t);
  tu_read(&af, r);
  CHECK(r[0] == 10 && r[1] == 9.5 && r[17] == 1.5);
  TU_EXPECT(Arange, ACLNN_ERR_PARAM_INVALID, "the range has 3 elements", s0, s1, s2, af.t);
  TU_EXPECT(Arange, ACLNN_ERR_PARAM_INVALID, "no range", s0, s1, z, ar.t);
  TU_EXPECT(Arange, ACLNN_ERR_PARAM_INVALID, "no range", s0, s1, sf, ar.t);

  tu_tensor *all[] = {&x, &t, &to, &vec, &tf, &ar, &af};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
  aclScalar *scalars[] = {p, zero, one, bad, int_p, s0, s1, s2, sf, z};
  for (size_t k = 0; k < sizeof scalars / sizeof scalars[0]; k++) aclDestroyScalar(scalars[k]);
  free(r);
  free(r2);
}

/* The unary functions of one shape: each against libm on the same inputs, float64 and float32,
 * and an integer input computing in float (those that document it). */
typedef aclnnStatus (*unary_phase_one)(const aclTensor *, aclTensor *, uint64_t *,
                                       aclOpExecutor **);
typedef aclnnStatus (*phase_two)(void *, uint64_t, aclOpExecutor *, aclrtStream);
static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double ref_reciprocal(double x) { return 1 / x; }

static void test_unary_table(void) {
  static const struct {
    const char *name;
    unary_phase_one one;
    phase_two two;
    double (*ref)(double);
    bool ints_to_float;
  } ops[] = {
      {"Exp", aclnnExpGetWorkspaceSize, aclnnExp, exp, true},
      {"Expm1", aclnnExpm1GetWorkspaceSize, aclnnExpm1, expm1, true},
      {"Log", aclnnLogGetWorkspaceSize, aclnnLog, log, true},
      {"Log1p", aclnnLog1pGetWorkspaceSize, aclnnLog1p, log1p, true},
      {"Log2", aclnnLog2GetWorkspaceSize, aclnnLog2, log2, true},
      {"Tan", aclnnTanGetWorkspaceSize, aclnnTan, tan, true},
      {"Sigmoid", aclnnSigmoidGetWorkspaceSize, aclnnSigmoid, ref_sigmoid, true},
      {"Reciprocal", aclnnReciprocalGetWorkspaceSize, aclnnReciprocal, ref_reciprocal, true},
      {"Erf", aclnnErfGetWorkspaceSize, aclnnErf, erf, true},
      {"Floor", aclnnFloorGetWorkspaceSize, aclnnFloor, floor, false},
      {"Ceil", aclnnCeilGetWorkspaceSize, aclnnCeil, ceil, false},
      {"Trunc", aclnnTruncGetWorkspaceSize, aclnnTrunc, trunc, false},
      {"Abs", aclnnAbsGetWorkspaceSize, aclnnAbs, fabs, false},
  };
  const double in[5] = {0.25, 1.5, 3, 0.75, 2.5};
  double r[5];
  tu_tensor x = tu_make(ACL_DOUBLE, 1, D(5), in), o = tu_make(ACL_DOUBLE, 1, D(5), NULL);
  tu_tensor i = tu_make(ACL_INT32, 1, D(5), V(1, 2, 3, 4, 5)),
            fo = tu_make(ACL_FLOAT, 1, D(5), NULL);
  tu_tensor io = tu_make(ACL_INT32, 1, D(5), NULL);
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    uint64_t ws = 0;
    aclOpExecutor *ex = NULL;
    CHECK(ops[k].one(x.t, o.t, &ws, &ex) == ACLNN_SUCCESS && ws == 0);
    CHECK(ops[k].two(NULL, 0, ex, tu_stream) == ACLNN_SUCCESS);
    tu_read(&o, r);
    for (int e = 0; e < 5; e++) {
      if (fabs(r[e] - ops[k].ref(in[e])) > 1e-15 * fabs(r[e])) {
        CHECK_NEAR(r[e], ops[k].ref(in[e]), 0);
        fprintf(stderr, "  (aclnn%s)\n", ops[k].name);
      }
    }
    /* integers: computed in float (an integer out cannot hold that), or not supported */
    aclnnStatus st = ops[k].one(i.t, fo.t, &ws, &ex);
    if (ops[k].ints_to_float) {
      CHECK(st == ACLNN_SUCCESS && ops[k].two(NULL, 0, ex, tu_stream) == ACLNN_SUCCESS);
      tu_read(&fo, r);
      CHECK_NEAR(r[2], ops[k].ref(3), 1e-6 * fabs(ops[k].ref(3)));
      CHECK(ops[k].one(i.t, io.t, &ws, &ex) == ACLNN_ERR_PARAM_INVALID);
    } else if (ops[k].ref != fabs) {
      CHECK(st == ACLNN_ERR_PARAM_INVALID); /* floating types only */
    } else {                                /* Abs computes in int32, which a float out holds */
      CHECK(st == ACLNN_SUCCESS && ops[k].two(NULL, 0, ex, tu_stream) == ACLNN_SUCCESS);
      tu_read(&fo, r);
      CHECK(r[2] == 3);
    }
    CHECK(ops[k].one(NULL, o.t, &ws, &ex) == ACLNN_ERR_PARAM_NULLPTR);
  }
  /* Abs of integers, the minimum wrapping; LogicalNot; in place */
  tu_tensor i8 = tu_make(ACL_INT8, 1, D(3), V(-128, -5, 7)), i8o = tu_make(ACL_INT8, 1, D(3), NULL);
  TU_RUN(Abs, i8.t, i8o.t);
  tu_read(&i8o, r);
  CHECK(r[0] == -128 && r[1] == 5 && r[2] == 7);
  TU_RUN(InplaceFloor, x.t);
  tu_read(&x, r);
  CHECK(r[0] == 0 && r[1] == 1 && r[4] == 2);
  tu_tensor bo = tu_make(ACL_BOOL, 1, D(3), NULL);
  TU_RUN(LogicalNot, i8.t, bo.t);
  tu_read(&bo, r);
  CHECK(r[0] == 0 && r[2] == 0);
  TU_RUN(LogicalNot, x.t, fo.t); /* a bool result stored into float */
  tu_read(&fo, r);
  CHECK(r[0] == 1 && r[1] == 0);

  /* maximum / minimum / clamp_max: NaN propagates */
  tu_tensor a = tu_make(ACL_FLOAT, 1, D(3), V(1, NAN, -2)), b = tu_make(ACL_FLOAT, 1, D(1), V(0));
  tu_tensor ab = tu_make(ACL_FLOAT, 1, D(3), NULL);
  TU_RUN(Maximum, a.t, b.t, ab.t);
  tu_read(&ab, r);
  CHECK(r[0] == 1 && r[1] != r[1] && r[2] == 0);
  TU_RUN(Minimum, a.t, b.t, ab.t);
  tu_read(&ab, r);
  CHECK(r[0] == 0 && r[1] != r[1] && r[2] == -2);
  aclScalar *half = tu_scalar_f(ACL_DOUBLE, 0.5);
  TU_RUN(ClampMax, a.t, half, ab.t);
  tu_read(&ab, r);
  CHECK(r[0] == 0.5 && r[1] != r[1] && r[2] == -2);
  TU_RUN(ClampMaxTensor, a.t, b.t, ab.t);
  tu_read(&ab, r);
  CHECK(r[0] == 0 && r[2] == -2);
  TU_EXPECT(Maximum, ACLNN_ERR_PARAM_INVALID, "not supported", bo.t, bo.t, bo.t);
  TU_EXPECT(ClampMax, ACLNN_ERR_PARAM_NULLPTR, "clipValueMax", a.t, NULL, ab.t);

  /* sigmoid backward: gradOutput * (1 - y) * y */
  tu_tensor y = tu_make(ACL_FLOAT, 1, D(3), V(0.25, 0.5, 1));
  tu_tensor g = tu_make(ACL_FLOAT, 1, D(3), V(2, 2, 2));
  TU_RUN(SigmoidBackward, g.t, y.t, ab.t);
  tu_read(&ab, r);
  CHECK(r[0] == 0.375 && r[1] == 0.5 && r[2] == 0);

  tu_tensor *all[] = {&x, &o, &i, &fo, &io, &i8, &i8o, &bo, &a, &b, &ab, &y, &g};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) tu_free(all[k]);
  aclDestroyScalar(half);
}

void test_pointwise(void) {
  test_arithmetic();
  test_select();
  test_copy_fill();
  test_activations();
  test_unary_table();
  test_random_layout();
}
