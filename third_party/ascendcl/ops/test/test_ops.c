/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * C tests of the stand-in's aclnn operator library through AscendCL's public API only: the
 * argument objects (aclCreateTensor & co., their invalid arguments), the two-phase protocol
 * (executor, workspace, phase-two errors, repeatable executors), the pointwise operators'
 * semantics (broadcasting, non-contiguous views, dtype promotion, every dtype) and their error
 * paths, and a task faulting its device.  Exit status 0 when every check passes.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "aclnnop/aclnn_add.h"
#include "test_util.h"

int tu_failures;
aclrtStream tu_stream;

/* ---- the argument objects ---- */

static void test_meta(void) {
  int64_t dims[2] = {2, 3}, strides[2] = {3, 1}, storage[1] = {6}, neg[2] = {2, -1};
  aclTensor *t = aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, storage, 1, NULL);
  CHECK(t != NULL);
  CHECK(aclDestroyTensor(t) == ACLNN_SUCCESS);
  /* NULL strides: contiguous */
  t = aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, storage, 1, NULL);
  CHECK(t != NULL);
  aclDestroyTensor(t);
  CHECK(aclCreateTensor(neg, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, storage, 1, NULL) == NULL);
  CHECK_MSG("dimension 1");
  CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, neg, 0, ACL_FORMAT_ND, storage, 1, NULL) == NULL);
  CHECK(aclCreateTensor(NULL, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, storage, 1, NULL) == NULL);
  CHECK_MSG("null pointer");
  CHECK(aclCreateTensor(dims, 2, ACL_STRING, strides, 0, ACL_FORMAT_ND, storage, 1, NULL) == NULL);
  CHECK_MSG("not a tensor element type");
  CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, strides, 1, ACL_FORMAT_ND, storage, 1, NULL) == NULL);
  CHECK_MSG("storage of 6 elements");
  CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, strides, -1, ACL_FORMAT_ND, storage, 1, NULL) == NULL);
  CHECK(aclCreateTensor(dims, 2, ACL_FLOAT, strides, 0, (aclFormat)77, storage, 1, NULL) == NULL);
  int64_t many[17] = {0};
  CHECK(aclCreateTensor(many, 17, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, storage, 1, NULL) == NULL);
  CHECK_MSG("at most 16");

  float f = 2.5f;
  aclScalar *s = aclCreateScalar(&f, ACL_FLOAT);
  CHECK(s != NULL);
  CHECK(aclDestroyScalar(s) == ACLNN_SUCCESS);
  CHECK(aclCreateScalar(NULL, ACL_FLOAT) == NULL);
  CHECK(aclCreateScalar(&f, ACL_COMPLEX128) == NULL);

  int64_t ints[3] = {1, 2, 3};
  float floats[2] = {1, 2};
  bool bools[2] = {true, false};
  aclIntArray *ia = aclCreateIntArray(ints, 3);
  aclFloatArray *fa = aclCreateFloatArray(floats, 2);
  aclBoolArray *ba = aclCreateBoolArray(bools, 2);
  CHECK(ia != NULL && fa != NULL && ba != NULL);
  CHECK(aclDestroyIntArray(ia) == 0 && aclDestroyFloatArray(fa) == 0 &&
        aclDestroyBoolArray(ba) == 0);
  CHECK(aclCreateIntArray(NULL, 2) == NULL);
  CHECK((ia = aclCreateIntArray(NULL, 0)) != NULL);
  aclDestroyIntArray(ia);

  /* a list owns its tensors: destroying it destroys them (a leak checker sees the rest) */
  aclTensor *items[2] = {
      aclCreateTensor(dims, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND, storage, 1, NULL),
      aclCreateTensor(dims, 2, ACL_INT32, NULL, 0, ACL_FORMAT_ND, storage, 1, NULL)};
  aclTensorList *l = aclCreateTensorList((const aclTensor *const *)items, 2);
  CHECK(l != NULL);
  CHECK(aclDestroyTensorList(l) == ACLNN_SUCCESS);
  CHECK(aclCreateTensorList(NULL, 2) == NULL);

  CHECK(aclDestroyTensor(NULL) == ACLNN_ERR_PARAM_NULLPTR);
  CHECK(aclDestroyScalar(NULL) == ACLNN_ERR_PARAM_NULLPTR);
  CHECK(aclDestroyIntArray(NULL) == ACLNN_ERR_PARAM_NULLPTR);
  CHECK(aclDestroyFloatArray(NULL) == ACLNN_ERR_PARAM_NULLPTR);
  CHECK(aclDestroyBoolArray(NULL) == ACLNN_ERR_PARAM_NULLPTR);
  CHECK(aclDestroyTensorList(NULL) == ACLNN_ERR_PARAM_NULLPTR);
  CHECK(aclSetAclOpExecutorRepeatable(NULL) == 561103);
  CHECK(aclDestroyAclOpExecutor(NULL) == 561103);
}

/* ---- aclnnAdd / aclnnAdds / in-place ---- */

static void test_add(void) {
  /* contiguous, with alpha, float32 */
  double a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {10, 20, 30, 40, 50, 60};
  tu_tensor x = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, a);
  tu_tensor y = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, b);
  tu_tensor o = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 3}, NULL);
  aclScalar *alpha = tu_scalar_f(ACL_FLOAT, 0.5);
  TU_RUN(Add, x.t, y.t, alpha, o.t);
  double r[6];
  tu_read(&o, r);
  for (int k = 0; k < 6; k++) CHECK_NEAR(r[k], a[k] + 0.5 * b[k], 0);

  /* broadcasting [2, 3] + [3] and [2, 1] + [3] into [2, 3] */
  tu_tensor row = tu_make(ACL_FLOAT, 1, (int64_t[]){3}, (double[]){100, 200, 300});
  tu_tensor col = tu_make(ACL_FLOAT, 2, (int64_t[]){2, 1}, (double[]){7, 8});
  aclScalar *one = tu_scalar_i(ACL_INT64, 1);
  TU_RUN(Add, x.t, row.t, one, o.t);
  tu_read(&o, r);
  for (int k = 0; k < 6; k++) CHECK_NEAR(r[k], a[k] + 100 * (k % 3 + 1), 0);
  TU_RUN(Add, col.t, row.t, one, o.t);
  tu_read(&o, r);
  for (int k = 0; k < 6; k++) CHECK_NEAR(r[k], (k < 3 ? 7 : 8) + 100 * (k % 3 + 1), 0);

  /* a non-contiguous view: x transposed ([3, 2], strides [1, 3]) plus a stride-0 operand,
   * written into a strided output (every other element of a [3, 4] buffer) */
  tu_tensor xt = tu_view(&x, 2, (int64_t[]){3, 2}, (int64_t[]){1, 3}, 0);
  tu_tensor zero_stride = tu_view(&row, 2, (int64_t[]){3, 2}, (int64_t[]){0, 0}, 1);
  tu_tensor big = tu_make(ACL_FLOAT, 2, (int64_t[]){3, 4}, NULL);
  tu_tensor ov = tu_view(&big, 2, (int64_t[]){3, 2}, (int64_t[]){4, 2}, 1);
  TU_RUN(Add, xt.t, zero_stride.t, one, ov.t);
  double rb[12];
  tu_read(&big, rb);
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 2; j++) CHECK_NEAR(rb[i * 4 + j * 2 + 1], a[j * 3 + i] + 200, 0);
  }

  /* integers wrap in their type; alpha applies in it */
  tu_tensor i8 = tu_make(ACL_INT8, 1, (int64_t[]){3}, (double[]){100, -100, 5});
  tu_tensor i8o = tu_make(ACL_INT8, 1, (int64_t[]){3}, NULL);
  aclScalar *two = tu_scalar_i(ACL_INT64, 2);
  TU_RUN(Add, i8.t, i8.t, two, i8o.t);
  tu_read(&i8o, r);
  CHECK_NEAR(r[0], (int8_t)(100 + 200), 0);
  CHECK_NEAR(r[1], (int8_t)(-100 - 200), 0);
  CHECK_NEAR(r[2], 15, 0);

  /* promotion: int32 + float16 computes in float16; int8 + uint8 in int16 */
  tu_tensor i32 = tu_make(ACL_INT32, 1, (int64_t[]){3}, (double[]){1, 2, 2049});
  tu_tensor h = tu_make(ACL_FLOAT16, 1, (int64_t[]){3}, (double[]){0.5, 0.25, 0});
  tu_tensor ho = tu_make(ACL_FLOAT, 1, (int64_t[]){3}, NULL);
  TU_RUN(Add, i32.t, h.t, one, ho.t);
  tu_read(&ho, r);
  CHECK_NEAR(r[0], 1.5, 0);
  CHECK_NEAR(r[1], 2.25, 0);
  CHECK_NEAR(r[2], 2048, 0); /* 2049 rounds to 2048 in float16 */
  tu_tensor u8 = tu_make(ACL_UINT8, 1, (int64_t[]){3}, (double[]){200, 255, 0});
  tu_tensor i16o = tu_make(ACL_INT16, 1, (int64_t[]){3}, NULL);
  TU_RUN(Add, i8.t, u8.t, one, i16o.t);
  tu_read(&i16o, r);
  CHECK_NEAR(r[0], 300, 0);
  CHECK_NEAR(r[1], 155, 0);

  /* every dtype the operator documents that the ABI has */
  static const aclDataType all[] = {ACL_BOOL,  ACL_UINT8,   ACL_INT8, ACL_INT16, ACL_INT32,
                                    ACL_INT64, ACL_FLOAT16, ACL_BF16, ACL_FLOAT, ACL_DOUBLE};
  for (size_t d = 0; d < sizeof all / sizeof all[0]; d++) {
    tu_tensor p = tu_make(all[d], 1, (int64_t[]){4}, (double[]){0, 1, 1, 0});
    tu_tensor q = tu_make(all[d], 1, (int64_t[]){4}, (double[]){0, 0, 1, 1});
    tu_tensor s = tu_make(all[d], 1, (int64_t[]){4}, NULL);
    aclScalar *al = tu_scalar_i(ACL_BOOL, 1);
    TU_RUN(Add, p.t, q.t, al, s.t);
    tu_read(&s, r);
    double expect2 = all[d] == ACL_BOOL ? 1 : 2;
    CHECK_NEAR(r[0], 0, 0);
    CHECK_NEAR(r[1], 1, 0);
    CHECK_NEAR(r[2], expect2, 0);
    CHECK_NEAR(r[3], 1, 0);
    aclDestroyScalar(al);
    tu_free(&p);
    tu_free(&q);
    tu_free(&s);
  }

  /* aclnnAdds: tensor-scalar promotion (int tensor, float scalar: float32) */
  aclScalar *half = tu_scalar_f(ACL_DOUBLE, 0.5);
  tu_tensor fo = tu_make(ACL_FLOAT, 1, (int64_t[]){3}, NULL);
  TU_RUN(Adds, i32.t, half, two, fo.t);
  tu_read(&fo, r);
  CHECK_NEAR(r[0], 2, 0);
  CHECK_NEAR(r[2], 2050, 0);
  /* ... which an int32 out cannot hold */
  TU_EXPECT(Adds, ACLNN_ERR_PARAM_INVALID, "cannot be stored", i32.t, half, two, i32.t);

  /* in place */
  TU_RUN(InplaceAdd, x.t, row.t, one);
  tu_read(&x, r);
  for (int k = 0; k < 6; k++) CHECK_NEAR(r[k], a[k] + 100 * (k % 3 + 1), 0);
  TU_RUN(InplaceAdds, x.t, half, two);
  tu_read(&x, r);
  CHECK_NEAR(r[0], a[0] + 100 + 1, 0);
  TU_EXPECT(InplaceAdd, ACLNN_ERR_PARAM_INVALID, "broadcast", row.t, x.t, one);

  /* phase one's errors */
  TU_EXPECT(Add, ACLNN_ERR_PARAM_NULLPTR, "aclnnAdd: self is a null pointer", NULL, y.t, one, o.t);
  TU_EXPECT(Add, ACLNN_ERR_PARAM_NULLPTR, "other is a null pointer", x.t, NULL, one, o.t);
  TU_EXPECT(Add, ACLNN_ERR_PARAM_NULLPTR, "alpha is a null pointer", x.t, y.t, NULL, o.t);
  TU_EXPECT(Add, ACLNN_ERR_PARAM_NULLPTR, "out is a null pointer", x.t, y.t, one, NULL);
  tu_tensor i8o6 = tu_make(ACL_INT8, 2, (int64_t[]){2, 3}, NULL);
  tu_tensor two_elems = tu_make(ACL_FLOAT, 1, (int64_t[]){2}, NULL);
  TU_EXPECT(Add, ACLNN_ERR_PARAM_INVALID, "cannot be stored into out", x.t, y.t, one, i8o6.t);
  TU_EXPECT(Add, ACLNN_ERR_PARAM_INVALID, "does not broadcast", x.t, two_elems.t, one, o.t);
  TU_EXPECT(Add, ACLNN_ERR_PARAM_INVALID, "not the broadcast shape", row.t, row.t, one, o.t);
  TU_EXPECT(Add, ACLNN_ERR_PARAM_INVALID, "alpha (ACL_FLOAT) cannot be cast", i8.t, i8.t, alpha,
            i8o.t);
  aclTensor *nine_dims = aclCreateTensor((int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, 9, ACL_FLOAT, NULL,
                                         0, ACL_FORMAT_ND, (int64_t[]){1}, 1, x.dev);
  TU_EXPECT(Add, ACLNN_ERR_PARAM_INVALID, "at most 8", nine_dims, nine_dims, one, nine_dims);
  aclDestroyTensor(nine_dims);
  float host_memory[6];
  aclTensor *on_host = aclCreateTensor((int64_t[]){2, 3}, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND,
                                       (int64_t[]){6}, 1, host_memory);
  TU_EXPECT(Add, ACLNN_ERR_PARAM_INVALID, "not inside one device allocation", on_host, y.t, one,
            o.t);
  aclDestroyTensor(on_host);
  aclTensor *no_data = aclCreateTensor((int64_t[]){2, 3}, 2, ACL_FLOAT, NULL, 0, ACL_FORMAT_ND,
                                       (int64_t[]){6}, 1, NULL);
  TU_EXPECT(Add, ACLNN_ERR_PARAM_NULLPTR, "no device address", no_data, y.t, one, o.t);
  aclDestroyTensor(no_data);
  tu_tensor c64 = tu_make_raw(ACL_COMPLEX64, 1, (int64_t[]){3});
  TU_EXPECT(Add, ACLNN_ERR_PARAM_INVALID, "not supported", c64.t, c64.t, one, c64.t);
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  CHECK(aclnnAddGetWorkspaceSize(x.t, y.t, one, o.t, NULL, &ex) == ACLNN_ERR_PARAM_NULLPTR);
  CHECK(aclnnAddGetWorkspaceSize(x.t, y.t, one, o.t, &ws, NULL) == ACLNN_ERR_PARAM_NULLPTR);

  /* phase two's errors: each releases the executor (a leak checker sees the rest) */
  CHECK(aclnnAdd(NULL, 0, NULL, tu_stream) == ACLNN_ERR_PARAM_NULLPTR);
  CHECK(aclnnAddGetWorkspaceSize(x.t, y.t, one, o.t, &ws, &ex) == ACLNN_SUCCESS && ws == 0);
  CHECK(aclnnAdds(NULL, 0, ex, tu_stream) == ACLNN_ERR_PARAM_INVALID);
  CHECK_MSG("created by aclnnAddGetWorkspaceSize");

  /* a repeatable executor runs several times and is released by aclDestroyAclOpExecutor */
  CHECK(aclnnAddGetWorkspaceSize(y.t, y.t, one, o.t, &ws, &ex) == ACLNN_SUCCESS);
  CHECK(aclDestroyAclOpExecutor(ex) == ACLNN_ERR_PARAM_INVALID);
  CHECK_MSG("not repeatable");
  CHECK(aclSetAclOpExecutorRepeatable(ex) == ACLNN_SUCCESS);
  CHECK(aclnnAdd(NULL, 0, ex, tu_stream) == ACLNN_SUCCESS);
  CHECK(aclnnAdd(NULL, 0, ex, tu_stream) == ACLNN_SUCCESS);
  CHECK(aclDestroyAclOpExecutor(ex) == ACLNN_SUCCESS);
  CHECK(aclrtSynchronizeStream(tu_stream) == ACL_SUCCESS);
  tu_read(&o, r);
  CHECK_NEAR(r[5], 120, 0);
  /* ... and is the way to drop one that cannot run */
  CHECK(aclnnAddGetWorkspaceSize(y.t, y.t, one, o.t, &ws, &ex) == ACLNN_SUCCESS);
  CHECK(aclSetAclOpExecutorRepeatable(ex) == ACLNN_SUCCESS);
  CHECK(aclDestroyAclOpExecutor(ex) == ACLNN_SUCCESS);

  tu_tensor *all_t[] = {&xt,  &zero_stride, &ov, &x,  &y,  &o,    &row, &col, &big,  &i8,
                        &i8o, &i32,         &h,  &ho, &u8, &i16o, &fo,  &c64, &i8o6, &two_elems};
  for (size_t k = 0; k < sizeof all_t / sizeof all_t[0]; k++) tu_free(all_t[k]);
  aclDestroyScalar(alpha);
  aclDestroyScalar(one);
  aclDestroyScalar(two);
  aclDestroyScalar(half);
}

/* ---- the pointwise engine's runs: long ones cross its blocks, overlapping ones keep order ---- */

static void test_pointwise_runs(void) {
  enum { N = 1000 }; /* several of the engine's runs of SOP_RUN elements */
  double a[N], b[N], r[N + 1];
  for (int k = 0; k < N; k++) {
    a[k] = k * 0.25 - 7;
    b[k] = 3 - k;
  }
  aclScalar *one = tu_scalar_i(ACL_INT64, 1);
  aclScalar *two = tu_scalar_i(ACL_INT64, 2);
  /* contiguous [4, 250] (one run of 1000 after merging) plus a broadcast row [250] */
  tu_tensor x = tu_make(ACL_FLOAT, 2, (int64_t[]){4, 250}, a);
  tu_tensor y = tu_make(ACL_FLOAT, 2, (int64_t[]){4, 250}, b);
  tu_tensor row = tu_view(&y, 1, (int64_t[]){250}, (int64_t[]){1}, 0);
  tu_tensor o = tu_make(ACL_FLOAT, 2, (int64_t[]){4, 250}, NULL);
  TU_RUN(Add, x.t, y.t, two, o.t);
  tu_read(&o, r);
  for (int k = 0; k < N; k++) CHECK_NEAR(r[k], (float)(a[k] + 2 * b[k]), 0);
  TU_RUN(Add, x.t, row.t, one, o.t);
  tu_read(&o, r);
  for (int k = 0; k < N; k++) CHECK_NEAR(r[k], (float)(a[k] + b[k % 250]), 0);
  /* in place on exactly the same elements: each reads its own value */
  TU_RUN(InplaceAdd, x.t, x.t, one);
  tu_read(&x, r);
  for (int k = 0; k < N; k++) CHECK_NEAR(r[k], 2 * a[k], 0);

  /* out is the input shifted by one element: element k reads what element k - 1 wrote, as
   * one element at a time in row-major order computes it (the engine keeps that order when
   * out overlaps an input otherwise than exactly) */
  tu_tensor buf = tu_make(ACL_INT64, 1, (int64_t[]){N + 1}, NULL);
  tu_tensor head = tu_view(&buf, 1, (int64_t[]){N}, (int64_t[]){1}, 0);
  tu_tensor tail = tu_view(&buf, 1, (int64_t[]){N}, (int64_t[]){1}, 1);
  TU_RUN(Adds, head.t, one, one, tail.t); /* buf[k + 1] = buf[k] + 1, buf zeros */
  tu_read(&buf, r);
  for (int k = 0; k <= N; k++) CHECK_NEAR(r[k], k, 0);

  tu_tensor *all_t[] = {&row, &x, &y, &o, &head, &tail, &buf};
  for (size_t k = 0; k < sizeof all_t / sizeof all_t[0]; k++) tu_free(all_t[k]);
  aclDestroyScalar(one);
  aclDestroyScalar(two);
}

/* ---- a task that faults its device; last, since the device then needs a reset ---- */

static void test_fault(void) {
  tu_tensor x = tu_make(ACL_FLOAT, 1, (int64_t[]){4}, (double[]){1, 2, 3, 4});
  tu_tensor o = tu_make(ACL_FLOAT, 1, (int64_t[]){4}, NULL);
  aclScalar *one = tu_scalar_i(ACL_INT64, 1);
  uint64_t ws = 0;
  aclOpExecutor *ex = NULL;
  CHECK(aclnnAddGetWorkspaceSize(x.t, x.t, one, o.t, &ws, &ex) == ACLNN_SUCCESS);
  /* the memory goes away between the phases: the task finds it outside device memory */
  CHECK(aclrtSynchronizeStream(tu_stream) == ACL_SUCCESS);
  CHECK(aclrtFree(x.dev) == ACL_SUCCESS);
  x.dev = NULL;
  CHECK(aclnnAdd(NULL, 0, ex, tu_stream) == ACLNN_SUCCESS);
  CHECK(aclrtSynchronizeStream(tu_stream) == ACL_ERROR_RT_AICORE_EXCEPTION);
  CHECK_MSG("aclnnAdd: tensor argument 1");
  /* the fault is sticky: the next launch is refused */
  CHECK(aclnnAddGetWorkspaceSize(o.t, o.t, one, o.t, &ws, &ex) == ACLNN_SUCCESS);
  CHECK(aclnnAdd(NULL, 0, ex, tu_stream) == ACLNN_ERR_RUNTIME_ERROR);
  CHECK_MSG("aclnnAdd: the runtime refused the task");
  aclDestroyScalar(one);
  tu_free(&x);
  tu_free(&o);
}

void test_pointwise(void); /* test_pointwise.c */

int main(void) {
  if (tu_setup() != 0) return 1;
  test_meta();
  test_add();
  test_pointwise_runs();
  test_pointwise();
  test_fault();
  return tu_teardown();
}
