/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * What npu's kernels share: the kernel entry (npu_enter, then the kernel body, then every aclnn
 * argument object the body created is destroyed, on every path), tb_value -> aclnn argument
 * objects, dtype mapping, and the aclnn two-phase call:
 *
 *   static tb_status add_out(npu_call *c) {           // [self, other, alpha, out]
 *     aclTensor *self = npu_tensor(c, 0), *other = npu_tensor(c, 1), *out = npu_tensor(c, 3);
 *     aclScalar *alpha = npu_scalar(c, 2);
 *     return NPU_ACLNN(c, Add, self, other, alpha, out);
 *   }
 *   NPU_KERNEL(k_add, "add.out", add_out, NPU_ALL, "add.out(Tensor self, ...) -> Tensor(a!)");
 *
 * NPU_ACLNN runs aclnnAddGetWorkspaceSize, takes the workspace it asks for from torch_backend's
 * caching allocator (tb_kernel_call::workspace) and enqueues aclnnAdd on the call's stream;
 * failures map through npu_check with the aclnn function's name.  A body returns
 * npu_decline(c, ...) (TB_ERROR_NOT_SUPPORTED: the call runs on the CPU fallback) for what the
 * aclnn operator does not support, before enqueuing anything.
 *
 * Only AscendCL's public headers: the same source builds against CANN.
 */
#ifndef TB_NPU_KERNELS_COMMON_H_
#define TB_NPU_KERNELS_COMMON_H_

#include <aclnn/acl_meta.h>
#include <aclnn/aclnn_base.h>
#include <stdbool.h>

#include "../npu.h"

/** The documented dimension limit of aclnn operators: kernels decline larger tensors. */
#define NPU_MAX_DIMS 8
/** The most aclnn argument objects one kernel call creates. */
#define NPU_MAX_OBJECTS 48

#define NPU_BIT(dtype) TB_DTYPE_BIT(dtype)
#define NPU_FLOATS                                                                     \
  (NPU_BIT(TB_DTYPE_FLOAT32) | NPU_BIT(TB_DTYPE_FLOAT64) | NPU_BIT(TB_DTYPE_FLOAT16) | \
   NPU_BIT(TB_DTYPE_BFLOAT16))
#define NPU_INTS                                                                \
  (NPU_BIT(TB_DTYPE_UINT8) | NPU_BIT(TB_DTYPE_INT8) | NPU_BIT(TB_DTYPE_INT16) | \
   NPU_BIT(TB_DTYPE_INT32) | NPU_BIT(TB_DTYPE_INT64))
#define NPU_NUMBERS (NPU_FLOATS | NPU_INTS)
#define NPU_ALL (NPU_NUMBERS | NPU_BIT(TB_DTYPE_BOOL))

typedef aclnnStatus (*npu_aclnn_run_fn)(void *workspace, uint64_t workspaceSize,
                                        aclOpExecutor *executor, aclrtStream stream);

/** One kernel call in progress. */
typedef struct npu_call {
  tb_context ctx;
  const tb_kernel_call *call;
  const tb_value *args;
  int32_t count;
  int32_t device;
  /* aclnn argument objects created for the call, destroyed when it returns */
  int32_t num_objects;
  struct {
    int kind;
    const void *p;
  } objects[NPU_MAX_OBJECTS];
  /* the first failure creating an object: TB_OK, or the status (its message already set) */
  tb_status failed;
  /* phase one's outputs */
  uint64_t workspace_size;
  aclOpExecutor *executor;
} npu_call;

typedef tb_status (*npu_body_fn)(npu_call *c);

/** The tb_kernel_fn of every npu kernel: checks the call, npu_enter, runs @p body, destroys
 *  what it created. */
tb_status npu_kernel_entry(tb_context ctx, const tb_kernel_call *call, npu_body_fn body);

/** Publishes @p body as kernel @p symbol of operator @p opname (schema as torch prints it). */
#define NPU_KERNEL_DATA(symbol, opname, body, dtype_mask, schema, data_ptr)                   \
  static tb_status symbol##_entry(tb_context ctx, const tb_kernel_call *call) {               \
    return npu_kernel_entry(ctx, call, body);                                                 \
  }                                                                                           \
  const tb_kernel symbol = {sizeof(tb_kernel), opname, symbol##_entry, dtype_mask, 0, schema, \
                            (void *)(data_ptr)}
#define NPU_KERNEL(symbol, opname, body, dtype_mask, schema) \
  NPU_KERNEL_DATA(symbol, opname, body, dtype_mask, schema, NULL)

/** tb_kernel::data of the kernel being called. */
static inline const void *npu_kernel_data(const npu_call *c) { return c->call->kernel->data; }

/** Destroys the aclnn argument objects the call created after the first @p mark ones (mark:
 *  c->num_objects earlier): a kernel that launches an operator per element of a list (the fused
 *  optimizers) releases each element's objects once its operators are enqueued, and so stays
 *  within NPU_MAX_OBJECTS whatever the list's length. */
void npu_release_objects(npu_call *c, int32_t mark);

/** Declines the call (TB_ERROR_NOT_SUPPORTED, message "npu: <op>: <why>"). */
tb_status npu_decline(npu_call *c, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* ---- dtypes ---- */

aclDataType npu_acl_dtype(tb_dtype dtype);
bool npu_is_floating(tb_dtype dtype);

/* ---- arguments -> aclnn objects (owned by the call; NULL after a failure, which NPU_ACLNN
 * then reports) ---- */

bool npu_is_number(const tb_value *v);
bool npu_is_tensor(const tb_value *v);
/** The tensor of tb_value @p k's tensor (NULL for None). */
const tb_tensor *npu_arg_tensor(const npu_call *c, int32_t k);
/** A number argument as a double / int64. */
double npu_arg_double(const npu_call *c, int32_t k);
int64_t npu_arg_int(const npu_call *c, int32_t k);

/** A contiguous ND aclTensor of @p ndim @p sizes and @p dtype over device memory at @p data (a
 *  kernel's scratch from tb_kernel_call::workspace, a device word such as
 *  tb_rng_key::device_state). */
aclTensor *npu_dense_tensor(npu_call *c, int32_t ndim, const int64_t *sizes, aclDataType dtype,
                            const void *data);
/** An aclTensor over @p t: its sizes and strides, offset 0, ND, storage covering the view. */
aclTensor *npu_tensor_of(npu_call *c, const tb_tensor *t);
/** Argument @p k (a tensor; None gives NULL without failing). */
aclTensor *npu_tensor(npu_call *c, int32_t k);
/** Argument @p k (a number: INT -> ACL_INT64, DOUBLE -> ACL_DOUBLE, BOOL -> ACL_BOOL). */
aclScalar *npu_scalar(npu_call *c, int32_t k);
/** A scalar holding @p value as @p dtype (ACL_FLOAT, ACL_DOUBLE, ACL_INT64 or ACL_BOOL). */
aclScalar *npu_scalar_f(npu_call *c, double value, aclDataType dtype);
aclScalar *npu_scalar_i(npu_call *c, int64_t value);
/** Argument @p k (an int list / bool list). */
aclIntArray *npu_int_array(npu_call *c, int32_t k);
aclIntArray *npu_int_array_of(npu_call *c, const int64_t *values, int64_t count);
aclBoolArray *npu_bool_array(npu_call *c, int32_t k);
/** Argument @p k (a tensor list; its tensors belong to the list). */
aclTensorList *npu_tensor_list(npu_call *c, int32_t k);

/* ---- the two-phase call ---- */

/** Remembers that kernel @p aten enqueued aclnn operator @p aclnn on @p device (work.c; for
 *  npu_fault_work).  npu_aclnn_launch calls it for every operator it enqueues. */
void npu_note_work(int32_t device, const char *aclnn, const char *aten);

/** Phase two after a phase one that returned @p status (name: "aclnnXxx"). */
tb_status npu_aclnn_launch(npu_call *c, const char *name, aclnnStatus status, npu_aclnn_run_fn run);

/** Both phases of aclnn<Name>(args...) on the call's stream; a tb_status. */
#define NPU_ACLNN(c, Name, ...)                                                         \
  npu_aclnn_launch(                                                                     \
      (c), "aclnn" #Name,                                                               \
      aclnn##Name##GetWorkspaceSize(__VA_ARGS__, &(c)->workspace_size, &(c)->executor), \
      aclnn##Name)

/* ---- kernel tables of each file, NULL-terminated (registry.c flattens them) ---- */

extern const tb_kernel *const npu_pointwise_kernels[];
extern const tb_kernel *const npu_blas_kernels[];
extern const tb_kernel *const npu_softmax_kernels[];
extern const tb_kernel *const npu_reduce_kernels[];
extern const tb_kernel *const npu_index_kernels[];
extern const tb_kernel *const npu_norm_kernels[];
extern const tb_kernel *const npu_loss_kernels[];
extern const tb_kernel *const npu_optim_kernels[];
extern const tb_kernel *const npu_attention_kernels[];

#endif /* TB_NPU_KERNELS_COMMON_H_ */
