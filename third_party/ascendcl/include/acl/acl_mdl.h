/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's acl/acl_mdl.h, reduced to the part torch_backend's npu adapter uses: the
 * model runtime instance (aclmdlRI) built by stream capture ("aclgraph"), declared from Huawei's
 * public AscendCL documentation (the aclmdlRICaptureBegin, aclmdlRICaptureGetInfo,
 * aclmdlRICaptureEnd, aclmdlRIExecuteAsync, aclmdlRIDestroy, aclmdlRICaptureMode and
 * aclmdlRICaptureStatus pages of the runtime API reference) -- names, parameter types and
 * order, enum values as documented; text our own.  CANN marks these interfaces experimental.
 * The stand-in's implementation is third_party/ascendcl/src/model.c; what it decides where
 * the documentation is silent is written there.
 *
 * Between aclmdlRICaptureBegin and aclmdlRICaptureEnd on a stream, the tasks enqueued on that
 * stream (operators, aclrtMemcpyAsync, aclrtMemsetAsync) do not run: they are kept in a model
 * runtime instance, which aclmdlRIExecuteAsync runs -- again at every call -- on a stream of
 * the same device.  The capture mode restricts the "unsafe" calls (aclrtMemcpy, and
 * aclrtMemcpyAsync with host memory aclrtMallocHost did not allocate, which is synchronous)
 * on the capturing stream's device while the capture lasts:
 *
 *   ACL_MODEL_RI_CAPTURE_MODE_GLOBAL        no thread may make them;
 *   ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL  the thread that began the capture may not;
 *   ACL_MODEL_RI_CAPTURE_MODE_RELAXED       every thread may.
 *
 * A refused unsafe call returns ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT.  With any mode,
 * aclmdlRICaptureEnd must come from the thread that called aclmdlRICaptureBegin unless the mode
 * is RELAXED (ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD otherwise).
 */
#ifndef TB_STANDIN_ACL_ACL_MDL_H_
#define TB_STANDIN_ACL_ACL_MDL_H_

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A model runtime instance: here, the tasks a stream capture recorded.  Opaque. */
typedef void *aclmdlRI;

/** Which threads a capture forbids the unsafe calls (aclmdlRICaptureMode page). */
typedef enum {
  ACL_MODEL_RI_CAPTURE_MODE_GLOBAL = 0,   /* no thread may make unsafe calls */
  ACL_MODEL_RI_CAPTURE_MODE_THREAD_LOCAL, /* the capturing thread may not */
  ACL_MODEL_RI_CAPTURE_MODE_RELAXED,      /* every thread may */
} aclmdlRICaptureMode;

/** A stream's capture state (aclmdlRICaptureStatus page). */
typedef enum {
  ACL_MODEL_RI_CAPTURE_STATUS_NONE = 0,    /* the stream does not capture */
  ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE,      /* it captures */
  ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED, /* it captures, but the capture has failed */
} aclmdlRICaptureStatus;

/** Starts capturing the tasks enqueued on @p stream (not the default stream:
 *  ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT) into a new model runtime instance.  Work queued on
 *  the stream before stays outside it.  ACL_ERROR_RT_STREAM_CAPTURED when the stream captures
 *  already; ACL_ERROR_INVALID_PARAM for an unknown @p mode. */
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureBegin(aclrtStream stream, aclmdlRICaptureMode mode);

/** The capture state of @p stream and, while it captures, the model runtime instance being
 *  built (NULL otherwise).  Either output may be NULL, not both. */
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureGetInfo(aclrtStream stream,
                                                    aclmdlRICaptureStatus *status,
                                                    aclmdlRI *modelRI);

/** Ends the capture of @p stream and returns the model runtime instance in @p modelRI.
 *  ACL_ERROR_RT_STREAM_NOT_CAPTURED when the stream does not capture;
 *  ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD (the capture goes on) from another thread than
 *  aclmdlRICaptureBegin's unless the mode is RELAXED; ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
 *  when the capture failed (it ends, without a model; the recent error message says why). */
ACL_FUNC_VISIBILITY aclError aclmdlRICaptureEnd(aclrtStream stream, aclmdlRI *modelRI);

/** Enqueues one run of @p modelRI's tasks on @p stream, a stream of the model's device
 *  (ACL_ERROR_RT_MODEL_CONTEXT otherwise).  Asynchronous.  Runs of one model never overlap. */
ACL_FUNC_VISIBILITY aclError aclmdlRIExecuteAsync(aclmdlRI modelRI, aclrtStream stream);

/** Destroys @p modelRI.  ACL_ERROR_RT_MODEL_RUNNING while runs of it are queued or running
 *  (destroy it once they are done); ACL_ERROR_RT_MODEL_CAPTURED while it is being captured. */
ACL_FUNC_VISIBILITY aclError aclmdlRIDestroy(aclmdlRI modelRI);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACL_ACL_MDL_H_ */
