/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's acl/acl_base.h: the base types, data types and return codes of AscendCL
 * that torch_backend's npu adapter uses, declared from Huawei's public AscendCL documentation
 * (the "aclError", "aclDataType", "aclFormat" pages of the CANN application development
 * guide) -- names and values as documented, text our own.  A real CANN toolkit ships its own
 * header of this name; builds against CANN (-DTORCH_BACKEND_ASCEND_HOME) never see this file.
 */
#ifndef TB_STANDIN_ACL_ACL_BASE_H_
#define TB_STANDIN_ACL_ACL_BASE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ACL_FUNC_VISIBILITY
#define ACL_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

/** Return code of every AscendCL call: 0 success, otherwise one of the codes below. */
typedef int aclError;

/* Handles: opaque to applications. */
typedef void *aclrtStream;
typedef void *aclrtEvent;
typedef void *aclrtContext;

/* Success. */
static const int ACL_SUCCESS = 0;
static const int ACL_ERROR_NONE = 0; /* deprecated spelling of ACL_SUCCESS */

/* 1xxxxx: the caller's environment or logic. */
static const int ACL_ERROR_INVALID_PARAM = 100000;
static const int ACL_ERROR_UNINITIALIZE = 100001;
static const int ACL_ERROR_REPEAT_INITIALIZE = 100002;
static const int ACL_ERROR_INVALID_FILE = 100003;
static const int ACL_ERROR_UNSUPPORTED_DATA_TYPE = 100026;
static const int ACL_ERROR_FORMAT_NOT_MATCH = 100027;
static const int ACL_ERROR_REPEAT_FINALIZE = 100037;

/* 2xxxxx: resources, or an interface the hardware does not support. */
static const int ACL_ERROR_BAD_ALLOC = 200000;
static const int ACL_ERROR_API_NOT_SUPPORT = 200001;
static const int ACL_ERROR_INVALID_DEVICE = 200002;
static const int ACL_ERROR_MEMORY_ADDRESS_UNALIGNED = 200003;
static const int ACL_ERROR_RESOURCE_NOT_MATCH = 200004;
static const int ACL_ERROR_INVALID_RESOURCE_HANDLE = 200005;
static const int ACL_ERROR_FEATURE_UNSUPPORTED = 200006;

/* 3xxxxx: service errors. */
static const int ACL_ERROR_STORAGE_OVER_LIMIT = 300000;

/* 5xxxxx: internal errors. */
static const int ACL_ERROR_INTERNAL_ERROR = 500000;
static const int ACL_ERROR_FAILURE = 500001;
static const int ACL_ERROR_GE_FAILURE = 500002;
static const int ACL_ERROR_RT_FAILURE = 500003;
static const int ACL_ERROR_DRV_FAILURE = 500004;

/* Codes the runtime passes through (the "RUNTIME" table of the aclError page). */
static const int32_t ACL_ERROR_RT_PARAM_INVALID = 107000;
static const int32_t ACL_ERROR_RT_INVALID_DEVICEID = 107001;
static const int32_t ACL_ERROR_RT_CONTEXT_NULL = 107002;
static const int32_t ACL_ERROR_RT_STREAM_CONTEXT = 107003;
static const int32_t ACL_ERROR_RT_MODEL_CONTEXT = 107004;
static const int32_t ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID = 107006;
static const int32_t ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL = 107007;
static const int32_t ACL_ERROR_RT_ADDR_UNALIGNED = 107008;
static const int32_t ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016;
static const int32_t ACL_ERROR_RT_INVALID_HANDLE = 107017;
static const int32_t ACL_ERROR_RT_WAIT_TIMEOUT = 107019;
static const int32_t ACL_ERROR_RT_TASK_TIMEOUT = 107020;
/* Stream capture (acl_mdl.h): what the capture of a stream refuses. */
static const int32_t ACL_ERROR_RT_CAPTURE_DEPENDENCY = 107024;
static const int32_t ACL_ERROR_RT_STREAM_UNJOINED = 107025;
static const int32_t ACL_ERROR_RT_MODEL_CAPTURED = 107026;
static const int32_t ACL_ERROR_RT_STREAM_CAPTURED = 107027;
static const int32_t ACL_ERROR_RT_EVENT_CAPTURED = 107028;
static const int32_t ACL_ERROR_RT_STREAM_NOT_CAPTURED = 107029;
static const int32_t ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT = 107030;
static const int32_t ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT = 107031;
static const int32_t ACL_ERROR_RT_MODEL_RUNNING = 107037;
static const int32_t ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD = 107038;
static const int32_t ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000;
static const int32_t ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const int32_t ACL_ERROR_RT_MEMORY_FREE = 207002;
static const int32_t ACL_ERROR_RT_NO_DEVICE = 207004;
static const int32_t ACL_ERROR_RT_RESOURCE_ALLOC_FAIL = 207005;
static const int32_t ACL_ERROR_RT_NO_EVENT_RESOURCE = 207007;
static const int32_t ACL_ERROR_RT_NO_STREAM_RESOURCE = 207008;
static const int32_t ACL_ERROR_RT_DEVIDE_OOM = 207018;
static const int32_t ACL_ERROR_RT_INTERNAL_ERROR = 507000;
static const int32_t ACL_ERROR_RT_TS_ERROR = 507001;
static const int32_t ACL_ERROR_RT_STREAM_NOT_COMPLETE = 507004;
static const int32_t ACL_ERROR_RT_EVENT_NOT_COMPLETE = 507006;
static const int32_t ACL_ERROR_RT_SYS_DMA = 507013;
static const int32_t ACL_ERROR_RT_AICORE_TIMEOUT = 507014;
static const int32_t ACL_ERROR_RT_AICORE_EXCEPTION = 507015;
static const int32_t ACL_ERROR_RT_AICORE_TRAP_EXCEPTION = 507016;
static const int32_t ACL_ERROR_RT_AICPU_TIMEOUT = 507017;
static const int32_t ACL_ERROR_RT_AICPU_EXCEPTION = 507018;
static const int32_t ACL_ERROR_RT_DEV_SETUP_ERROR = 507033;
static const int32_t ACL_ERROR_RT_VECTOR_CORE_TIMEOUT = 507034;
static const int32_t ACL_ERROR_RT_VECTOR_CORE_EXCEPTION = 507035;
static const int32_t ACL_ERROR_RT_VECTOR_CORE_TRAP_EXCEPTION = 507036;
static const int32_t ACL_ERROR_RT_AICORE_TRAP_READ_OVERFLOW = 507042;
static const int32_t ACL_ERROR_RT_AICORE_TRAP_WRITE_OVERFLOW = 507043;
static const int32_t ACL_ERROR_RT_VECTOR_CORE_TRAP_READ_OVERFLOW = 507044;
static const int32_t ACL_ERROR_RT_VECTOR_CORE_TRAP_WRITE_OVERFLOW = 507045;
static const int32_t ACL_ERROR_RT_STREAM_SYNC_TIMEOUT = 507046;
static const int32_t ACL_ERROR_RT_EVENT_SYNC_TIMEOUT = 507047;
static const int32_t ACL_ERROR_RT_FFTS_PLUS_TIMEOUT = 507048;
static const int32_t ACL_ERROR_RT_FFTS_PLUS_EXCEPTION = 507049;
static const int32_t ACL_ERROR_RT_FFTS_PLUS_TRAP_EXCEPTION = 507050;
static const int32_t ACL_ERROR_RT_DEVICE_MEM_ERROR = 507053;
static const int32_t ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR = 507054;
static const int32_t ACL_ERROR_RT_SUSPECT_DEVICE_MEM_ERROR = 507055;
static const int32_t ACL_ERROR_RT_LINK_ERROR = 507056;
static const int32_t ACL_ERROR_RT_SUSPECT_REMOTE_ERROR = 507057;
static const int32_t ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899;
static const int32_t ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED = 507903;

/** Element types (the "aclDataType" page). */
typedef enum {
  ACL_DT_UNDEFINED = -1,
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_INT8 = 2,
  ACL_INT32 = 3,
  ACL_UINT8 = 4,
  ACL_INT16 = 6,
  ACL_UINT16 = 7,
  ACL_UINT32 = 8,
  ACL_INT64 = 9,
  ACL_UINT64 = 10,
  ACL_DOUBLE = 11,
  ACL_BOOL = 12,
  ACL_STRING = 13,
  ACL_COMPLEX64 = 16,
  ACL_COMPLEX128 = 17,
  ACL_BF16 = 27
} aclDataType;

/** Tensor formats (the "aclFormat" page); the stand-in's operators handle ACL_FORMAT_ND only
 *  (NCHW/NHWC are accepted as ND: they describe a logical layout, not a private one). */
typedef enum {
  ACL_FORMAT_UNDEFINED = -1,
  ACL_FORMAT_NCHW = 0,
  ACL_FORMAT_NHWC = 1,
  ACL_FORMAT_ND = 2,
  ACL_FORMAT_NC1HWC0 = 3,
  ACL_FORMAT_FRACTAL_Z = 4,
  ACL_FORMAT_FRACTAL_NZ = 29
} aclFormat;

/** The error messages of the calling thread's failed calls, newest first, and clears them
 *  (aclGetRecentErrMsg.md); NULL when there is none.  The pointer is valid until the thread's
 *  next aclGetRecentErrMsg. */
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

/** Size in bytes of one element of @p dataType (0 for ACL_DT_UNDEFINED and ACL_STRING). */
ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACL_ACL_BASE_H_ */
