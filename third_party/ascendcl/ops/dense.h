/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Contiguous copies of an executor's captured tensors, for the structured operators (matrix
 * products, reductions, normalisation, losses, indexing), which compute on dense row-major
 * arrays.  Run functions only: they read and write device memory through sop_host.  Every
 * load returns a malloc'd array (free it) or NULL when out of host memory; an empty tensor
 * gives a non-NULL array that must not be read.
 *
 * Also the phase-one helpers those operators share (dimension arguments).
 */
#ifndef TB_STANDIN_OPS_DENSE_H_
#define TB_STANDIN_OPS_DENSE_H_

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

/** Captured tensor @p k, in row-major order, converted to @p as (its own dtype: the bytes as
 *  they are).  With @p ndim >= 0 the tensor is read broadcast to (@p ndim, @p dims) (as
 *  sop_iter broadcasts); with @p ndim < 0, in its own shape. */
void *dense_load_as(const aclOpExecutor *ex, int32_t k, aclDataType as, int32_t ndim,
                    const int64_t *dims);
/** Shorthands: as double, as int64 (indices, integer sums), in its own shape. */
double *dense_load(const aclOpExecutor *ex, int32_t k);
int64_t *dense_load_i(const aclOpExecutor *ex, int32_t k);
/** Stores the row-major @p src, of type @p from, into captured tensor @p k (its layout and
 *  dtype), converting. */
void dense_store_as(const aclOpExecutor *ex, int32_t k, const void *src, aclDataType from);
void dense_store(const aclOpExecutor *ex, int32_t k, const double *src);

/** Whether @p t's elements are contiguous in row-major order (size-1 dimensions' strides
 *  aside). */
bool dense_is_contiguous(const aclTensor *t);

/** malloc of @p count elements of @p size bytes (at least one byte): NULL when out of memory
 *  or when the size overflows. */
void *dense_alloc(int64_t count, size_t size);

/** Fails the running task: "out of host memory" (the stand-in's device has no other way to
 *  report it). */
void dense_fail_memory(void);

/* ---- phase one ---- */

/** Wraps @p dim (negative counts from the end) into [0, ndim) (a 0-dim tensor takes 0 and -1,
 *  as one of 1 dimension); ACLNN_ERR_PARAM_INVALID, with a message naming @p arg, otherwise. */
aclnnStatus dense_wrap_dim(const char *op, const char *arg, int64_t dim, int32_t ndim,
                           int64_t *wrapped);
/** The set of dimensions of @p dims (wrapped, distinct, checked as dense_wrap_dim) into
 *  @p mask[ndim]; an empty list selects every dimension when @p empty_is_all. */
aclnnStatus dense_dim_mask(const char *op, const char *arg, const aclIntArray *dims, int32_t ndim,
                           bool empty_is_all, bool *mask);
/** ACLNN_ERR_PARAM_INVALID unless @p t's shape is (@p ndim, @p dims). */
aclnnStatus dense_check_shape(const char *op, const char *arg, const aclTensor *t, int32_t ndim,
                              const int64_t *dims);

#endif /* TB_STANDIN_OPS_DENSE_H_ */
