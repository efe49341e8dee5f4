/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Shared vocabulary of the checks: assertion macros that record a message and jump to the
 * check's `done:` label (where it releases what it created), and small helpers.
 *
 * Every check follows the same shape:
 *
 *   static tb_check_outcome check_x(tb_check_context *ctx) {
 *     tb_check_outcome outcome = TB_CHECK_FAIL;
 *     ... declare every resource as NULL ...
 *     const tb_vendor_handle *v = ctx->vendor;
 *     EXPECT_OK(v->memory.device_malloc(v->context, 0, 64, &p));
 *     ...
 *     outcome = TB_CHECK_PASS;
 *   done:
 *     ... release every resource that is not NULL ...
 *     return outcome;
 *   }
 */
#ifndef TORCH_BACKEND_CONFORMANCE_SUPPORT_H_
#define TORCH_BACKEND_CONFORMANCE_SUPPORT_H_

#include <stdbool.h>
#include <torch_backend/conformance.h>

/* Records a failure message (printf-style) in ctx; returns TB_CHECK_FAIL. */
tb_check_outcome tbc_fail(tb_check_context *ctx, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Records a skip reason; returns TB_CHECK_SKIP. */
tb_check_outcome tbc_skip(tb_check_context *ctx, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
/* Records "`call` returned STATUS (expected EXPECTED): <vendor last_error>". */
void tbc_fail_status(tb_check_context *ctx, const char *call, tb_status got, tb_status expected);

/* Number of devices, or -1 after recording a failure. */
int32_t tbc_device_count(tb_check_context *ctx);
/* Deterministic pseudo-random bytes for buffer contents. */
void tbc_fill(unsigned char *buffer, size_t size, uint32_t seed);
/* Index of the first differing byte, or -1 when equal. */
long tbc_first_difference(const unsigned char *a, const unsigned char *b, size_t size);
/* True when the vendor's last_error is a non-empty string. */
bool tbc_has_message(tb_check_context *ctx);

/* Fail unless `call` returns TB_OK. */
#define EXPECT_OK(call)                                \
  do {                                                 \
    tb_status tbc_status_ = (call);                    \
    if (tbc_status_ != TB_OK) {                        \
      tbc_fail_status(ctx, #call, tbc_status_, TB_OK); \
      goto done;                                       \
    }                                                  \
  } while (0)

/* Fail unless `call` returns `expected`; a failure status must also come with a message. */
#define EXPECT_STATUS(call, expected)                                                            \
  do {                                                                                           \
    tb_status tbc_status_ = (call);                                                              \
    if (tbc_status_ != (expected)) {                                                             \
      tbc_fail_status(ctx, #call, tbc_status_, (expected));                                      \
      goto done;                                                                                 \
    }                                                                                            \
    if ((expected) != TB_OK && (expected) != TB_ERROR_NOT_READY && !tbc_has_message(ctx)) {      \
      tbc_fail(ctx, "%s returned %s as expected, but last_error() gave an empty message", #call, \
               tb_status_name(expected));                                                        \
      goto done;                                                                                 \
    }                                                                                            \
  } while (0)

/* Fail with a formatted message unless `condition` holds. */
#define EXPECT_TRUE(condition, ...) \
  do {                              \
    if (!(condition)) {             \
      tbc_fail(ctx, __VA_ARGS__);   \
      goto done;                    \
    }                               \
  } while (0)

/* Skip the check with a formatted reason. */
#define SKIP(...)                         \
  do {                                    \
    outcome = tbc_skip(ctx, __VA_ARGS__); \
    goto done;                            \
  } while (0)

/* The check groups, defined one per file. */
extern const tb_check tbc_context_checks[];
extern const size_t tbc_context_check_count;
extern const tb_check tbc_device_checks[];
extern const size_t tbc_device_check_count;
extern const tb_check tbc_memory_checks[];
extern const size_t tbc_memory_check_count;
extern const tb_check tbc_stream_checks[];
extern const size_t tbc_stream_check_count;
extern const tb_check tbc_event_checks[];
extern const size_t tbc_event_check_count;
extern const tb_check tbc_thread_checks[];
extern const size_t tbc_thread_check_count;
extern const tb_check tbc_fault_checks[];
extern const size_t tbc_fault_check_count;
extern const tb_check tbc_kernel_checks[];
extern const size_t tbc_kernel_check_count;
extern const tb_check tbc_collective_checks[];
extern const size_t tbc_collective_check_count;
extern const tb_check tbc_graph_checks[];
extern const size_t tbc_graph_check_count;
extern const tb_check tbc_storage_meta_checks[];
extern const size_t tbc_storage_meta_check_count;
extern const tb_check tbc_ipc_checks[];
extern const size_t tbc_ipc_check_count;
extern const tb_check tbc_program_checks[];
extern const size_t tbc_program_check_count;

#endif /* TORCH_BACKEND_CONFORMANCE_SUPPORT_H_ */
