/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Helpers of the stand-in operator tests: checks, device tensors made from host values, and
 * the two-phase call (TU_RUN: must succeed; TU_EXPECT: phase one must fail with a status and a
 * message).  Only AscendCL's public API; element conversions are the test's own (exact values
 * only), independent of the library under test.
 */
#ifndef TB_STANDIN_OPS_TEST_UTIL_H_
#define TB_STANDIN_OPS_TEST_UTIL_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"

extern int tu_failures;
extern aclrtStream tu_stream;

#define CHECK(cond)                                                                              \
  do {                                                                                           \
    if (!(cond)) {                                                                               \
      tu_failures++;                                                                             \
      fprintf(stderr, "%s:%d: CHECK(%s) failed (recent error: %s)\n", __FILE__, __LINE__, #cond, \
              aclGetRecentErrMsg());                                                             \
    }                                                                                            \
  } while (0)
#define CHECK_MSG(substring)                                                           \
  do {                                                                                 \
    const char *m_ = aclGetRecentErrMsg();                                             \
    if (m_ == NULL || strstr(m_, substring) == NULL) {                                 \
      tu_failures++;                                                                   \
      fprintf(stderr, "%s:%d: recent error \"%s\" lacks \"%s\"\n", __FILE__, __LINE__, \
              m_ != NULL ? m_ : "(null)", substring);                                  \
    }                                                                                  \
  } while (0)
#define CHECK_NEAR(got, want, tol)                                                             \
  do {                                                                                         \
    double g_ = (got), w_ = (want);                                                            \
    if (!(fabs(g_ - w_) <= (tol)) && !(g_ != g_ && w_ != w_)) {                                \
      tu_failures++;                                                                           \
      fprintf(stderr, "%s:%d: %s is %.9g, expected %.9g\n", __FILE__, __LINE__, #got, g_, w_); \
    }                                                                                          \
  } while (0)

typedef struct tu_tensor {
  aclTensor *t;
  void *dev; /* storage (owned unless a view) */
  aclDataType dtype;
  int64_t storage; /* elements */
  int owner;
} tu_tensor;

static inline size_t tu_size(aclDataType d) {
  switch (d) {
    case ACL_BOOL:
    case ACL_INT8:
    case ACL_UINT8:
      return 1;
    case ACL_INT16:
    case ACL_FLOAT16:
    case ACL_BF16:
      return 2;
    case ACL_INT32:
    case ACL_FLOAT:
      return 4;
    case ACL_COMPLEX128:
      return 16;
    default:
      return 8;
  }
}

static inline void tu_encode(void *p, aclDataType d, double v) {
  switch (d) {
    case ACL_BOOL:
      *(uint8_t *)p = v != 0;
      break;
    case ACL_UINT8:
      *(uint8_t *)p = (uint8_t)v;
      break;
    case ACL_INT8:
      *(int8_t *)p = (int8_t)v;
      break;
    case ACL_INT16:
      *(int16_t *)p = (int16_t)v;
      break;
    case ACL_INT32:
      *(int32_t *)p = (int32_t)v;
      break;
    case ACL_INT64:
      *(int64_t *)p = (int64_t)v;
      break;
    case ACL_FLOAT:
      *(float *)p = (float)v;
      break;
    case ACL_DOUBLE:
      *(double *)p = v;
      break;
    case ACL_BF16: { /* exact values only: the upper half of the float */
      float f = (float)v;
      uint32_t bits;
      memcpy(&bits, &f, 4);
      *(uint16_t *)p = (uint16_t)(bits >> 16);
      break;
    }
    case ACL_FLOAT16: { /* exact normal values (and 0, inf, nan) only */
      uint16_t h;
      if (v != v) {
        h = 0x7e00;
      } else if (v == 0) {
        h = signbit(v) ? 0x8000 : 0;
      } else if (isinf(v)) {
        h = v > 0 ? 0x7c00 : 0xfc00;
      } else {
        int e;
        double m = frexp(fabs(v), &e); /* |v| = m * 2^e, m in [0.5, 1) */
        h = (uint16_t)((v < 0 ? 0x8000 : 0) | ((e - 1 + 15) << 10) |
                       (uint16_t)((m * 2 - 1) * 1024));
      }
      *(uint16_t *)p = h;
      break;
    }
    default:
      memset(p, 0, tu_size(d));
      break;
  }
}

static inline double tu_decode(const void *p, aclDataType d) {
  switch (d) {
    case ACL_BOOL:
      return *(const uint8_t *)p != 0;
    case ACL_UINT8:
      return *(const uint8_t *)p;
    case ACL_INT8:
      return *(const int8_t *)p;
    case ACL_INT16:
      return *(const int16_t *)p;
    case ACL_INT32:
      return *(const int32_t *)p;
    case ACL_INT64:
      return (double)*(const int64_t *)p;
    case ACL_FLOAT:
      return *(const float *)p;
    case ACL_DOUBLE:
      return *(const double *)p;
    case ACL_BF16: {
      uint32_t bits = (uint32_t) * (const uint16_t *)p << 16;
      float f;
      memcpy(&f, &bits, 4);
      return f;
    }
    case ACL_FLOAT16: {
      uint16_t h = *(const uint16_t *)p;
      int e = (h >> 10) & 0x1f, m = h & 0x3ff;
      double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
      return h & 0x8000 ? -v : v;
    }
    default:
      return NAN;
  }
}

/* A contiguous device tensor of `dims` holding `values` (NULL: zeros). */
static inline tu_tensor tu_make(aclDataType d, int ndim, const int64_t *dims,
                                const double *values) {
  tu_tensor x = {NULL, NULL, d, 1, 1};
  for (int k = 0; k < ndim; k++) x.storage *= dims[k];
  size_t bytes = (size_t)x.storage * tu_size(d);
  char *host = calloc(1, bytes + 1);
  for (int64_t k = 0; values != NULL && k < x.storage; k++) {
    tu_encode(host + k * tu_size(d), d, values[k]);
  }
  if (aclrtMalloc(&x.dev, bytes + 1, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS ||
      aclrtMemcpy(x.dev, bytes + 1, host, bytes + 1, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS) {
    fprintf(stderr, "device allocation failed: %s\n", aclGetRecentErrMsg());
    exit(1);
  }
  free(host);
  x.t = aclCreateTensor(dims, (uint64_t)ndim, d, NULL, 0, ACL_FORMAT_ND, &x.storage, 1, x.dev);
  if (x.t == NULL) {
    fprintf(stderr, "aclCreateTensor failed: %s\n", aclGetRecentErrMsg());
    exit(1);
  }
  return x;
}
static inline tu_tensor tu_make_raw(aclDataType d, int ndim, const int64_t *dims) {
  return tu_make(d, ndim, dims, NULL);
}

/* A view of base's storage. */
static inline tu_tensor tu_view(const tu_tensor *base, int ndim, const int64_t *dims,
                                const int64_t *strides, int64_t offset) {
  tu_tensor x = *base;
  x.owner = 0;
  x.t = aclCreateTensor(dims, (uint64_t)ndim, base->dtype, strides, offset, ACL_FORMAT_ND,
                        &base->storage, 1, base->dev);
  if (x.t == NULL) {
    fprintf(stderr, "aclCreateTensor (view) failed: %s\n", aclGetRecentErrMsg());
    exit(1);
  }
  return x;
}

/* Waits for the stream, then reads the whole storage as doubles. */
static inline void tu_read(const tu_tensor *x, double *out) {
  size_t bytes = (size_t)x->storage * tu_size(x->dtype);
  char *host = malloc(bytes + 1);
  if (aclrtSynchronizeStream(tu_stream) != ACL_SUCCESS ||
      aclrtMemcpy(host, bytes + 1, x->dev, bytes, ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS) {
    tu_failures++;
    fprintf(stderr, "reading a result failed: %s\n", aclGetRecentErrMsg());
    memset(host, 0, bytes);
  }
  for (int64_t k = 0; k < x->storage; k++)
    out[k] = tu_decode(host + k * tu_size(x->dtype), x->dtype);
  free(host);
}

static inline void tu_free(tu_tensor *x) {
  if (x->t != NULL) aclDestroyTensor(x->t);
  if (x->owner && x->dev != NULL) aclrtFree(x->dev);
  x->t = NULL;
  x->dev = NULL;
}

static inline aclScalar *tu_scalar_f(aclDataType d, double v) {
  char buf[16];
  tu_encode(buf, d, v);
  return aclCreateScalar(buf, d);
}
static inline aclScalar *tu_scalar_i(aclDataType d, int64_t v) { return tu_scalar_f(d, (double)v); }

/* Both phases of aclnn<Op>(args...), which must succeed (workspace from aclrtMalloc). */
#define TU_RUN(Op, ...)                                                                      \
  do {                                                                                       \
    uint64_t ws_ = 0;                                                                        \
    aclOpExecutor *ex_ = NULL;                                                               \
    void *wsp_ = NULL;                                                                       \
    aclnnStatus st_ = aclnn##Op##GetWorkspaceSize(__VA_ARGS__, &ws_, &ex_);                  \
    CHECK(st_ == ACLNN_SUCCESS);                                                             \
    if (st_ == ACLNN_SUCCESS) {                                                              \
      if (ws_ > 0) CHECK(aclrtMalloc(&wsp_, ws_, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS); \
      CHECK(aclnn##Op(wsp_, ws_, ex_, tu_stream) == ACLNN_SUCCESS);                          \
      if (wsp_ != NULL) {                                                                    \
        CHECK(aclrtSynchronizeStream(tu_stream) == ACL_SUCCESS);                             \
        aclrtFree(wsp_);                                                                     \
      }                                                                                      \
    }                                                                                        \
  } while (0)

/* Phase one of aclnn<Op>(args...) must fail with `status` and a message containing `msg`. */
#define TU_EXPECT(Op, status, msg, ...)                                      \
  do {                                                                       \
    uint64_t ws_ = 0;                                                        \
    aclOpExecutor *ex_ = NULL;                                               \
    CHECK(aclnn##Op##GetWorkspaceSize(__VA_ARGS__, &ws_, &ex_) == (status)); \
    CHECK_MSG(msg);                                                          \
  } while (0)

static inline int tu_setup(void) {
  if (aclInit(NULL) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS ||
      aclrtCreateStream(&tu_stream) != ACL_SUCCESS) {
    fprintf(stderr, "runtime setup failed: %s\n", aclGetRecentErrMsg());
    return 1;
  }
  return 0;
}

static inline int tu_teardown(void) {
  aclrtDestroyStream(tu_stream);
  aclrtResetDevice(0);
  aclFinalize();
  if (tu_failures > 0) fprintf(stderr, "%d check(s) failed\n", tu_failures);
  return tu_failures > 0;
}

#endif /* TB_STANDIN_OPS_TEST_UTIL_H_ */
