/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * STAND-IN for CANN's acl/acl_rt.h: the AscendCL runtime calls torch_backend's npu adapter
 * uses (devices, memory, streams, events), declared from Huawei's public AscendCL
 * documentation (one page per function in the CANN application development guide, "Runtime
 * management") -- names, parameter types and order, enum values as documented; text our own.
 * Semantics that matter to a caller are summarised beside each declaration; the stand-in's
 * implementation (third_party/ascendcl/src) follows them.
 */
#ifndef TB_STANDIN_ACL_ACL_RT_H_
#define TB_STANDIN_ACL_ACL_RT_H_

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Event flags of aclrtCreateEventWithFlag. */
#define ACL_EVENT_SYNC 0x00000001u
#define ACL_EVENT_CAPTURE_STREAM_PROGRESS 0x00000002u
#define ACL_EVENT_TIME_LINE 0x00000008u

/** Where aclrtMalloc takes memory from. */
typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2
} aclrtMemMallocPolicy;

/** Direction of aclrtMemcpy / aclrtMemcpyAsync (aclrtMemcpyKind.md).  ACL_MEMCPY_DEFAULT lets
 *  the runtime infer the direction from the addresses.  (CANN also defines
 *  ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE, ACL_MEMCPY_INNER_DEVICE_TO_DEVICE and
 *  ACL_MEMCPY_INTER_DEVICE_TO_DEVICE after it; the stand-in does not implement them.) */
typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE = 1,
  ACL_MEMCPY_DEVICE_TO_HOST = 2,
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
  ACL_MEMCPY_DEFAULT = 4
} aclrtMemcpyKind;

/** Which memory aclrtGetMemInfo reports. */
typedef enum aclrtMemAttr {
  ACL_DDR_MEM = 0,
  ACL_HBM_MEM = 1,
  ACL_DDR_MEM_HUGE = 2,
  ACL_DDR_MEM_NORMAL = 3,
  ACL_HBM_MEM_HUGE = 4,
  ACL_HBM_MEM_NORMAL = 5
} aclrtMemAttr;

/** aclrtQueryEventStatus's answer. */
typedef enum aclrtEventRecordedStatus {
  ACL_EVENT_RECORDED_STATUS_NOT_READY = 0,
  ACL_EVENT_RECORDED_STATUS_COMPLETE = 1
} aclrtEventRecordedStatus;

/** aclrtStreamQuery's answer. */
typedef enum aclrtStreamStatus {
  ACL_STREAM_STATUS_COMPLETE = 0,
  ACL_STREAM_STATUS_NOT_READY = 1,
  ACL_STREAM_STATUS_RESERVED = 0xFFFF
} aclrtStreamStatus;

/* ---- Devices.  AscendCL keeps a *current device* (and its default context) per thread:
 * aclrtSetDevice makes a device current for the calling thread (creating the device's default
 * context, with its default stream, on first use in the process; threads that set the same
 * device share it); streams are created on, and memory allocated from, the current device.
 * Every aclrtSetDevice counts one reference to the device (aclrtSetDevice.md), every
 * aclrtResetDevice drops one; the last one releases the device's resources (its streams,
 * events and memory) after waiting for its work (aclrtResetDevice.md). */

/** Number of devices (needs no aclInit). */
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
/** Makes @p deviceId current for the calling thread; counts one reference (see above). */
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
/** The calling thread's current device; an error when it has none (aclrtGetDevice.md). */
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
/** Drops one reference to @p deviceId (see above).  The stand-in also clears a device fault
 *  here (standin.h). */
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
/** Waits for all work of the current device. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);
/** The SoC's name ("Ascend910B1", ...), or NULL when it cannot be read. */
ACL_FUNC_VISIBILITY const char *aclrtGetSocName(void);
/** Whether device @p deviceId can exchange data with @p peerDeviceId (1) or not (0); the two
 *  must differ (aclrtDeviceCanAccessPeer.md). */
ACL_FUNC_VISIBILITY aclError aclrtDeviceCanAccessPeer(int32_t *canAccessPeer, int32_t deviceId,
                                                      int32_t peerDeviceId);
/** Lets the current device exchange data with @p peerDeviceId, in that direction only; @p flags
 *  is reserved and must be 0 (aclrtDeviceEnablePeerAccess.md).  Copies between two devices need
 *  it on A2 (aclrtMemcpy.md). */
ACL_FUNC_VISIBILITY aclError aclrtDeviceEnablePeerAccess(int32_t peerDeviceId, uint32_t flags);

/* ---- Memory.  Device memory is not addressable by host code. */

/** @p size bytes (not 0) of the current device's memory, 64-byte aligned (aclrtMalloc.md). */
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
/** Frees at once, without waiting for work that uses the memory; NULL is an error. */
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
/** @p size bytes (not 0) of page-locked host memory, 64-byte aligned (host-addressable; the
 *  fast path of asynchronous copies). */
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);
/* ---- Memory shared between processes (aclrtIpcMemGetExportKey.md and the pages it links).
 * Process A exports a range of an aclrtMalloc block as a key of at most 64 characters; process
 * B imports the key and gets its own device address of the same memory; B closes its import,
 * then A closes the export, then A frees the block.  The stand-in keeps no whitelist of
 * importing processes: it takes ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION only. */

#define ACL_RT_IPC_MEM_EXPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_IPC_MEM_EXPORT_FLAG_DISABLE_PID_VALIDATION 0x1UL
#define ACL_RT_IPC_MEM_IMPORT_FLAG_DEFAULT 0x0UL
#define ACL_RT_IPC_MEM_IMPORT_FLAG_ENABLE_PEER_ACCESS 0x1UL

/** Exports [@p devPtr, + @p size) of one aclrtMalloc block as a key (@p len must be 65). */
ACL_FUNC_VISIBILITY aclError aclrtIpcMemGetExportKey(void *devPtr, size_t size, char *key,
                                                     size_t len, uint64_t flags);
/** The memory behind @p key, exported by another process (or this one), as an address of the
 *  current device. */
ACL_FUNC_VISIBILITY aclError aclrtIpcMemImportByKey(void **devPtr, const char *key, uint64_t flags);
/** Ends this process's import of @p key, or its export of @p key. */
ACL_FUNC_VISIBILITY aclError aclrtIpcMemClose(const char *key);

/** Synchronous copy of @p count bytes; @p destMax is the capacity of @p dst (count <= destMax). */
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count,
                                         aclrtMemcpyKind kind);
/** Copy enqueued on @p stream.  When the host end is not aclrtMallocHost memory, the call
 *  returns once the copy is done (aclrtMemcpyAsync.md). */
ACL_FUNC_VISIBILITY aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src,
                                              size_t count, aclrtMemcpyKind kind,
                                              aclrtStream stream);
/** Sets @p count bytes at @p devPtr (device memory, or aclrtMallocHost memory) to @p value
 *  (low byte), enqueued on @p stream. */
ACL_FUNC_VISIBILITY aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value,
                                              size_t count, aclrtStream stream);
/** Free and total bytes of the current device's memory of kind @p attr. */
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *free, size_t *total);

/* ---- Streams (of the current device). */

ACL_FUNC_VISIBILITY aclError aclrtCreateStream(aclrtStream *stream);
/** Destroys @p stream of the current device; waits for its work first (blocks). */
ACL_FUNC_VISIBILITY aclError aclrtDestroyStream(aclrtStream stream);
/** Blocks until @p stream's work is done; returns the error of failed work. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeStream(aclrtStream stream);
/** Whether @p stream's work is done, without blocking. */
ACL_FUNC_VISIBILITY aclError aclrtStreamQuery(aclrtStream stream, aclrtStreamStatus *status);
/** Work enqueued on @p stream after this call waits until @p event's recorded work is done.
 *  The event must have been created with ACL_EVENT_SYNC (aclrtCreateEventWithFlag.md). */
ACL_FUNC_VISIBILITY aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event);

/* ---- Events. */

/** An event of the current device with @p flag (ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE ...).
 *  Without ACL_EVENT_SYNC it cannot be waited for by aclrtStreamWaitEvent. */
ACL_FUNC_VISIBILITY aclError aclrtCreateEventWithFlag(aclrtEvent *event, uint32_t flag);
/** Destroys @p event without waiting for its recorded work (aclrtDestroyEvent.md). */
ACL_FUNC_VISIBILITY aclError aclrtDestroyEvent(aclrtEvent event);
/** Records @p event at the current end of @p stream's work (a stream of the event's device);
 *  recording again replaces the record, waits enqueued before keep theirs. */
ACL_FUNC_VISIBILITY aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream);
/** Whether the recorded work is done, without blocking.  An event never recorded answers
 *  ACL_EVENT_RECORDED_STATUS_NOT_READY (aclrtEventRecordedStatus.md). */
ACL_FUNC_VISIBILITY aclError aclrtQueryEventStatus(aclrtEvent event,
                                                   aclrtEventRecordedStatus *status);
/** Blocks until the recorded work is done. */
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeEvent(aclrtEvent event);
/** Milliseconds between two completed records of events created with ACL_EVENT_TIME_LINE. */
ACL_FUNC_VISIBILITY aclError aclrtEventElapsedTime(float *ms, aclrtEvent startEvent,
                                                   aclrtEvent endEvent);

#ifdef __cplusplus
}
#endif

#endif /* TB_STANDIN_ACL_ACL_RT_H_ */
