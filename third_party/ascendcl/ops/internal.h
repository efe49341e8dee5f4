/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The stand-in operator library's internals (libnnopbase: the aclnn argument objects and the
 * executor; libopapi: the operators).  Not part of AscendCL: only files of ops/ include it.
 *
 * An operator Xxx is written as
 *
 *   aclnnStatus aclnnXxxGetWorkspaceSize(<args>, uint64_t *workspaceSize,
 *                                        aclOpExecutor **executor) {
 *     static const char name[] = "aclnnXxx";
 *     SOP_CHECK(sop_check_nonnull(name, "self", self));        // ACLNN_ERR_PARAM_NULLPTR
 *     SOP_CHECK(sop_check_tensor(name, "self", self, mask));    // ACLNN_ERR_PARAM_INVALID
 *     ...
 *     aclOpExecutor *ex = sop_executor_new(name, 2, run_xxx);  // run_xxx runs on the stream
 *     if (ex == NULL) return ACLNN_ERR_INNER;
 *     sop_capture(ex, 0, out); sop_capture(ex, 1, self); ex->f[0] = ...;
 *     return sop_finish(ex, 0, workspaceSize, executor);
 *   }
 *   SOP_PHASE_TWO(Xxx)  // aclnnXxx(workspace, size, executor, stream) -> sop_launch
 *
 * Phase one validates on the host and captures copies of the descriptors (the caller may
 * destroy its aclTensor/aclScalar objects as soon as it returns).  The executor's run function
 * runs on the stream's worker thread, where sop_host(ex, k) is the host address of captured
 * tensor k's storage (device memory is reachable only there, through standin_device_to_host);
 * a run function that finds bad data (an index out of range) calls standin_task_fail.
 *
 * Pointwise operators need no run function of their own: sop_pointwise_prepare validates and
 * captures an output and its inputs (tensors, or scalars as constants), and the pointwise
 * engine runs a per-element function over them with broadcasting.
 */
#ifndef TB_STANDIN_OPS_INTERNAL_H_
#define TB_STANDIN_OPS_INTERNAL_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "acl/acl_base.h"
#include "aclnn/acl_meta.h"
#include "aclnn/aclnn_base.h"
#include "standin.h"

#define SOP_API STANDIN_API

/** The most dimensions aclCreateTensor accepts, and the most the operators accept (the
 *  documented limit of aclnn operators). */
#define SOP_TENSOR_MAX_DIMS 16
#define SOP_OP_MAX_DIMS 8

/* ---- the argument objects ---- */

struct aclTensor {
  aclDataType dtype;
  aclFormat format;
  int32_t ndim;
  int32_t storage_ndim;
  int64_t dims[SOP_TENSOR_MAX_DIMS];
  int64_t strides[SOP_TENSOR_MAX_DIMS]; /* elements, >= 0 */
  int64_t offset;                       /* elements */
  int64_t storage_dims[SOP_TENSOR_MAX_DIMS];
  void *data; /* device address of the storage */
  /* Stand-in only: a host constant standing for the tensor (a scalar operand captured into an
   * executor); never set by aclCreateTensor. */
  const void *host;
};

struct aclScalar {
  aclDataType dtype;
  unsigned char value[8]; /* one element of dtype */
};

struct aclIntArray {
  uint64_t size;
  int64_t *values;
};
struct aclFloatArray {
  uint64_t size;
  float *values;
};
struct aclBoolArray {
  uint64_t size;
  bool *values;
};
struct aclTensorList {
  uint64_t size;
  aclTensor **items; /* owned (aclDestroyTensorList destroys them); an element may be NULL */
};

/* ---- dtypes ---- */

/** The bit of @p dtype in a dtype mask (aclDataType values are below 64). */
#define SOP_BIT(dtype) ((uint64_t)1 << (unsigned)(dtype))
#define SOP_FLOATS \
  (SOP_BIT(ACL_FLOAT) | SOP_BIT(ACL_FLOAT16) | SOP_BIT(ACL_BF16) | SOP_BIT(ACL_DOUBLE))
#define SOP_INTS                                                                      \
  (SOP_BIT(ACL_INT8) | SOP_BIT(ACL_UINT8) | SOP_BIT(ACL_INT16) | SOP_BIT(ACL_INT32) | \
   SOP_BIT(ACL_INT64))
#define SOP_NUMBERS (SOP_FLOATS | SOP_INTS)
#define SOP_ALL (SOP_NUMBERS | SOP_BIT(ACL_BOOL))

/** Bytes per element (0: not a type a tensor can hold). */
SOP_API size_t sop_size(aclDataType dtype);
SOP_API const char *sop_dtype_name(aclDataType dtype);
SOP_API bool sop_is_float(aclDataType dtype);
/** Integer types, bool excluded. */
SOP_API bool sop_is_int(aclDataType dtype);

/** The common type of two tensors ("deduction relationship", tensor with tensor), or
 *  ACL_DT_UNDEFINED where the two do not combine. */
SOP_API aclDataType sop_promote(aclDataType a, aclDataType b);
/** The compute type of a tensor of @p tensor combined with a scalar of @p scalar ("deduction
 *  relationship", tensor with scalar). */
SOP_API aclDataType sop_promote_scalar(aclDataType tensor, aclDataType scalar);
/** Whether results of @p from may be stored into @p to ("conversion relationship"). */
SOP_API bool sop_can_cast(aclDataType from, aclDataType to);

/** An element as the engine computes it: `f` for floating compute types, `i` otherwise (bool
 *  as 0/1). */
typedef union sop_value {
  double f;
  int64_t i;
} sop_value;

SOP_API double sop_load_f(const void *p, aclDataType dtype);
SOP_API int64_t sop_load_i(const void *p, aclDataType dtype);
/** Stores converting: NaN and out-of-range values stored into integers give 0 / wrap like a
 *  cast through int64; anything non-zero stored into bool gives 1. */
SOP_API void sop_store_f(void *p, aclDataType dtype, double v);
SOP_API void sop_store_i(void *p, aclDataType dtype, int64_t v);
/** Load/store in the representation of @p compute (floating or not). */
SOP_API sop_value sop_load(const void *p, aclDataType dtype, aclDataType compute);
SOP_API void sop_store(void *p, aclDataType dtype, sop_value v, aclDataType compute);
/** @p v (in the representation of @p compute) rounded to what an element of @p compute holds. */
SOP_API sop_value sop_round(sop_value v, aclDataType compute);

/* ---- shapes ---- */

SOP_API int64_t sop_numel(const aclTensor *t);
/** Elements of storage the view spans from its first element (0 when empty). */
SOP_API int64_t sop_extent(const aclTensor *t);
/** "[2, 3]" into @p buf (at least 160 bytes); returns buf. */
SOP_API const char *sop_shape_str(const aclTensor *t, char *buf);
SOP_API bool sop_same_shape(const aclTensor *a, const aclTensor *b);
/** Whether @p t's shape broadcasts to (@p ndim, @p dims) (right-aligned, size 1 stretches). */
SOP_API bool sop_broadcasts_to(const aclTensor *t, int32_t ndim, const int64_t *dims);

/* ---- phase one: validation (each sets the recent error message "<op>: ..." on failure) ---- */

#define SOP_CHECK(expr)                                   \
  do {                                                    \
    aclnnStatus sop_status_ = (expr);                     \
    if (sop_status_ != ACLNN_SUCCESS) return sop_status_; \
  } while (0)

/** Sets the recent error to "<op>: <message>" and returns @p status. */
SOP_API aclnnStatus sop_fail(aclnnStatus status, const char *op, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
/** ACLNN_ERR_PARAM_NULLPTR when @p p is NULL. */
SOP_API aclnnStatus sop_check_nonnull(const char *op, const char *arg, const void *p);
/** ACLNN_ERR_PARAM_INVALID unless @p t's dtype is in @p dtypes, it has at most
 *  SOP_OP_MAX_DIMS dimensions, an ND-like format, and (when not empty) its elements lie in one
 *  device allocation. */
SOP_API aclnnStatus sop_check_tensor(const char *op, const char *arg, const aclTensor *t,
                                     uint64_t dtypes);
/** ACLNN_ERR_PARAM_INVALID unless @p s's dtype is in @p dtypes. */
SOP_API aclnnStatus sop_check_scalar(const char *op, const char *arg, const aclScalar *s,
                                     uint64_t dtypes);
/** ACLNN_ERR_PARAM_INVALID unless @p t has the shape of @p like. */
SOP_API aclnnStatus sop_check_same_shape(const char *op, const char *arg, const aclTensor *t,
                                         const char *like_arg, const aclTensor *like);
/** ACLNN_ERR_PARAM_INVALID unless results of @p from may be stored into @p arg's dtype. */
SOP_API aclnnStatus sop_check_cast(const char *op, aclDataType from, const char *arg,
                                   const aclTensor *t);

/* ---- the executor ---- */

typedef void (*sop_run_fn)(aclOpExecutor *ex);

/** A run of pointwise elements: out[e] for e < n from in[e * stride .. e * stride + stride - 1]
 *  (element e's inputs, in the operator's order), all in the representation of ex->compute.
 *  The engine hands runs of up to SOP_RUN elements, so that the per-element computation is
 *  one compiled loop rather than a call per element. */
typedef void (*sop_elem_fn)(sop_value *out, const sop_value *in, int32_t stride, int64_t n,
                            bool is_float, const aclOpExecutor *ex);
/** The most elements one call of an element function computes. */
#define SOP_RUN 256

struct aclOpExecutor {
  const char *name; /* the aclnn function, "aclnnAdd"; a static string */
  sop_run_fn run;
  uint64_t workspace_size;
  atomic_int refs; /* the caller's (until phase two, or destroy when repeatable) + tasks' */
  bool repeatable;
  int32_t count;   /* captured tensors */
  aclTensor *t;    /* count copies */
  void **host;     /* while running: host address of each tensor's element 0 (NULL if empty) */
  void *workspace; /* while running: host address of the workspace */
  void *workspace_device; /* phase two: its device address (a run translates it afresh: a
                           * captured task runs again at each run of its model) */
  /* Operator parameters. */
  double f[8];
  int64_t i[8];
  unsigned char consts[8][8]; /* storage of scalar operands (sop_capture_scalar) */
  /* Pointwise engine: tensor 0 is the output, 1..count-1 the inputs. */
  aclDataType compute; /* type elements are loaded and computed in */
  aclDataType result;  /* type results are rounded to before the store (ACL_BOOL for tests) */
  sop_elem_fn elem;
  /* Anything else an operator keeps, released with the executor. */
  void *state;
  void (*state_free)(void *state);
  /* A run of a repeatable executor is a copy holding a reference to it. */
  aclOpExecutor *parent;
};

/** Code of aclDestroyAclOpExecutor / aclSetAclOpExecutorRepeatable for a NULL executor
 *  (ACLNN_ERR_INNER_NULLPTR of the "common interface return codes" page). */
#define SOP_ERR_INNER_NULLPTR 561103

/** A new executor for @p count tensors running @p run; NULL (message set) when out of memory:
 *  return ACLNN_ERR_INNER then. */
SOP_API aclOpExecutor *sop_executor_new(const char *name, int32_t count, sop_run_fn run);
/** Drops one reference; frees at zero. */
SOP_API void sop_executor_release(aclOpExecutor *ex);
/** Copies @p t into slot @p k (NULL: an absent tensor, ndim -1). */
SOP_API void sop_capture(aclOpExecutor *ex, int32_t k, const aclTensor *t);
/** Slot @p k becomes a 0-dim host constant holding @p s's value in @p s's dtype, kept in
 *  ex->consts[@p slot]. */
SOP_API void sop_capture_scalar(aclOpExecutor *ex, int32_t k, int32_t slot, const aclScalar *s);
/** Ends phase one: stores @p workspace and @p ex into the caller's outputs. */
SOP_API aclnnStatus sop_finish(aclOpExecutor *ex, uint64_t workspace, uint64_t *workspaceSize,
                               aclOpExecutor **executor);
/** Phase two: checks the workspace and the executor and enqueues it on @p stream; the executor
 *  is released whatever happens (unless repeatable). */
SOP_API aclnnStatus sop_launch(const char *name, void *workspace, uint64_t workspaceSize,
                               aclOpExecutor *executor, aclrtStream stream);

/** Defines aclnn<Name>(workspace, workspaceSize, executor, stream). */
#define SOP_PHASE_TWO(Name)                                                                 \
  aclnnStatus aclnn##Name(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, \
                          aclrtStream stream) {                                             \
    return sop_launch("aclnn" #Name, workspace, workspaceSize, executor, stream);           \
  }

/** Host address of element 0 of captured tensor @p k (view offset applied), while running;
 *  NULL for an empty or absent tensor. */
static inline void *sop_host(const aclOpExecutor *ex, int32_t k) { return ex->host[k]; }

/* ---- strided iteration ---- */

#define SOP_ITER_MAX 8

/** Walks a shape in row-major order; operand k's pointer follows its tensor broadcast to the
 *  shape (right-aligned; size-1 and missing dimensions step 0). */
typedef struct sop_iter {
  int32_t ndim;
  int32_t count;
  int64_t dims[SOP_TENSOR_MAX_DIMS];
  int64_t idx[SOP_TENSOR_MAX_DIMS];
  int64_t step[SOP_ITER_MAX][SOP_TENSOR_MAX_DIMS]; /* bytes */
  char *ptr[SOP_ITER_MAX];
} sop_iter;

/** Starts at element 0 with operand k at @p base[k] laid out as @p t[k]; returns the number of
 *  elements. */
SOP_API int64_t sop_iter_init(sop_iter *it, int32_t ndim, const int64_t *dims, int32_t count,
                              const aclTensor *const *t, void *const *base);
SOP_API void sop_iter_next(sop_iter *it);

/* ---- pointwise operators ---- */

/** An input of a pointwise operator: a tensor, or a scalar (exactly one non-NULL). */
typedef struct sop_operand {
  const char *arg;
  const aclTensor *t;
  const aclScalar *s;
  /* SOP_MASK: a bool (or uint8) mask or condition, which takes no part in type promotion */
  unsigned flags;
} sop_operand;
#define SOP_MASK 1u

/**
 * Phase one of a pointwise operator: checks that every input's shape broadcasts to @p out's
 * (ACLNN_ERR_PARAM_INVALID otherwise) and that @p result may be stored into @p out, then
 * returns in @p *ex an executor computing out = elem(inputs) in @p compute (results rounded to
 * @p result).  Null and dtype checks are the caller's.  Scalars use const slots 0, 1, ...
 */
SOP_API aclnnStatus sop_pointwise_prepare(const char *op, sop_elem_fn elem, const char *out_arg,
                                          const aclTensor *out, int32_t n, const sop_operand *in,
                                          aclDataType compute, aclDataType result,
                                          aclOpExecutor **ex);

/** What a pointwise operator accepts and how it types its computation. */
typedef struct sop_pointwise_spec {
  const char *name; /* "aclnnMul" */
  sop_elem_fn elem;
  uint64_t inputs;   /* dtypes of its tensor inputs and of out */
  uint64_t computes; /* compute types it implements */
  unsigned flags;
} sop_pointwise_spec;
/** Integer and bool compute types become ACL_FLOAT (true division, sqrt of an integer). */
#define SOP_PW_INTS_TO_FLOAT 1u
/** Results are ACL_BOOL (comparisons, tests). */
#define SOP_PW_BOOL_RESULT 2u
/** The compute type is the first operand's (the other operands convert to it). */
#define SOP_PW_FIRST_TYPE 4u

/**
 * Phase one of a pointwise operator: every operand non-NULL (ACLNN_ERR_PARAM_NULLPTR naming
 * it), tensor dtypes in spec->inputs (masks: bool or uint8), the compute type the promotion of
 * the tensor operands then of the scalars (or per spec->flags), which must be in
 * spec->computes; then sop_pointwise_prepare.  The caller sets parameters on *ex (sop_param)
 * and ends with sop_finish.
 */
SOP_API aclnnStatus sop_pointwise_op(const sop_pointwise_spec *spec, const char *out_arg,
                                     const aclTensor *out, int32_t n, const sop_operand *in,
                                     aclOpExecutor **ex);
/** Parameter @p k of @p ex (f[k] and i[k]) from @p s (NULL: leaves them). */
SOP_API void sop_param(aclOpExecutor *ex, int32_t k, const aclScalar *s);

/** The pointwise engine (the run function sop_pointwise_prepare installs). */
SOP_API void sop_pointwise_run(aclOpExecutor *ex);

#endif /* TB_STANDIN_OPS_INTERNAL_H_ */
