/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * npu's internal interface: what the adapter's runtime half (vendor.c, device.c, memory.c,
 * stream.c: device, memory, stream and event slots over the AscendCL runtime) offers its
 * kernel half (kernels/: ATen operators over the aclnn operator API).
 *
 * The adapter includes only AscendCL's public headers (acl/acl.h, aclnn/..., aclnnop/...) and
 * calls only documented AscendCL functions, so the same source builds against a CANN toolkit
 * (-DTORCH_BACKEND_ASCEND_HOME) or against the stand-in in third_party/ascendcl.
 */
#ifndef TB_NPU_NPU_H_
#define TB_NPU_NPU_H_

#include <acl/acl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <torch_backend/vendor.h>

/** The stream behind a tb_stream handle (a tb_stream is a `npu_stream *`). */
typedef struct npu_stream {
  /* The AscendCL stream work goes to: the stream's own, or, while it has joined another
   * stream's graph capture (graph.c, multi-stream capture), the capturing stream's. */
  _Atomic(aclrtStream) handle;
  int32_t device;
  _Atomic uint64_t launches; /* npu_acl_stream() calls: how much work it was given */
} npu_stream;

/** The AscendCL stream to enqueue @p stream's work on (every enqueue asks for it once). */
static inline aclrtStream npu_acl_stream(tb_stream stream) {
  npu_stream *s = (npu_stream *)stream;
  atomic_fetch_add_explicit(&s->launches, 1, memory_order_relaxed);
  return atomic_load_explicit(&s->handle, memory_order_acquire);
}
/** The device index of @p stream. */
static inline int32_t npu_stream_device(tb_stream stream) {
  return ((const npu_stream *)stream)->device;
}

/**
 * Makes @p device current on the calling thread (aclrtSetDevice when it is not already: the
 * AscendCL state the ABI's explicit device indices map onto) and fails with
 * TB_ERROR_DEVICE_FAULT (the recorded message) when the device has faulted.  Every slot that
 * concerns a device, and every kernel, calls it first.  Returns TB_OK or a failure whose last
 * error is set.
 */
tb_status npu_enter(tb_context ctx, int32_t device);

/**
 * Maps the AscendCL (or aclnn) return code @p err of the call named @p call on @p device to a
 * tb_status and, for a failure, sets the vendor's last error to
 * "<call> failed on npu:<device> with <code name> (<code>): <aclGetRecentErrMsg()>".
 * Codes of asynchronous device failures (AI Core / vector core exceptions, timeouts, DMA and
 * memory errors) also fault @p device: the first such message is kept and later calls get
 * TB_ERROR_DEVICE_FAULT with it until tb_device_api::reset.  ACL_SUCCESS maps to TB_OK.
 * @p device may be -1 when no device is concerned.
 */
tb_status npu_check(tb_context ctx, int32_t device, int err, const char *call);

/** Sets the vendor's last error (printf-style) and returns @p status. */
tb_status npu_fail(tb_context ctx, tb_status status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/**
 * stream.inject_fault's runtime half: the next asynchronous fault npu_check records for
 * @p device gets "<message> (in inject_fault)" in front of its message (the runtime's own text
 * follows).  @p message is copied; the expectation goes with that fault and with
 * tb_device_api::reset, and an empty @p message withdraws it (the failing work could not be
 * enqueued).  (The failing work itself is an ordinary aclnn operator, whose runtime
 * message cannot carry the caller's.)
 */
void npu_expect_fault(int32_t device, const char *message);

/**
 * tb_stream_api::inject_fault (kernels/fault.c): enqueues on @p stream an aclnn operator that
 * faults the device through the public API when the stream reaches it (an aclnnIndexSelect
 * whose index is out of range), after npu_expect_fault(@p message).  Asynchronous.
 */
tb_status npu_inject_fault(tb_context ctx, tb_stream stream, const char *message);

/**
 * The work a fault names, as torch users know it (vendor.h, "Device faults": the failure's
 * message names the work that failed, the kernel's operator name).  A runtime fault message
 * names the aclnn operator that failed ("aclnnIndexSelect: index 7 is out of bounds ..."); the
 * kernel half (kernels/work.c) remembers, per device, which kernel last enqueued each aclnn
 * operator and returns that kernel's operator name ("index_select.out") for a message naming
 * one, NULL otherwise.  The string is static.  npu_check puts it in front of the message of a
 * fault it records.
 */
const char *npu_fault_work(int32_t device, const char *runtime_message);

/** The kernel table (kernels/registry.c); NULL when the build has no kernels. */
const tb_kernel_api *npu_kernel_api(void);

#endif /* TB_NPU_NPU_H_ */
