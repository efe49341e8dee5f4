/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Deliberately broken vendor libraries, one per loader error, selected by a BAD_* macro at
 * compile time, and a few good ones (GOOD_*).  Each starts from fake's slots (linked from
 * tb_fake_defaults) and breaks one thing in the table it returns from its own, strong
 * tb_vendor_get.
 */
#include <string.h>
#include <torch_backend/fake.h>

#if defined(BAD_NO_ENTRY)

/* A shared library that is not a vendor at all: no tb_vendor_get. */
TB_EXPORT int not_a_vendor(void) { return 42; }

#else

#define SLOT(gt, gf, slot, required, since, ret, params, names) .slot = tbv_##gf##_##slot,
static tb_device_api g_device = {.struct_size = sizeof(tb_device_api), TB_DEVICE_SLOTS(SLOT)};
static tb_memory_api g_memory = {.struct_size = sizeof(tb_memory_api), TB_MEMORY_SLOTS(SLOT)};
static tb_stream_api g_stream = {.struct_size = sizeof(tb_stream_api), TB_STREAM_SLOTS(SLOT)};
static tb_event_api g_event = {.struct_size = sizeof(tb_event_api), TB_EVENT_SLOTS(SLOT)};
#undef SLOT

/* A table from a vendor built against a later minor: two fields appended. */
typedef struct future_vendor {
  tb_vendor base;
  const void *next_group;
  int something_new;
} future_vendor;

static tb_status noop_kernel(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  (void)call;
  return TB_OK;
}
static const tb_kernel k_add = {.struct_size = sizeof(tb_kernel),
                                .name = "add.out",
                                .fn = noop_kernel,
                                .dtypes = TB_DTYPE_BIT(TB_DTYPE_FLOAT32)};
static const tb_kernel k_mul = {
    .struct_size = sizeof(tb_kernel), .name = "mul.out", .fn = noop_kernel};
static const tb_kernel k_flagged = {
    .struct_size = sizeof(tb_kernel), .name = "sub.out", .fn = noop_kernel, .flags = 0x4u};
static const tb_kernel *k_kernels[] = {&k_add, &k_mul, &k_add};
static const tb_kernel *k_flagged_kernels[] __attribute__((unused)) = {&k_add, &k_flagged};
static tb_kernel_api g_kernels __attribute__((unused)) = {sizeof(tb_kernel_api), 2, k_kernels};

/* init and finalize that count their calls (read by the loader test through dlsym), and an
 * init that fails with a message (BAD_INIT_FAILS). */
static int g_inits, g_finalizes;
TB_EXPORT int tb_test_inits(void) { return g_inits; }
TB_EXPORT int tb_test_finalizes(void) { return g_finalizes; }
static int g_context_token; /* the context this vendor hands out: its address */

static tb_status counting_init(const tb_host_api *host, tb_context *ctx) {
  g_inits++;
#if defined(BAD_INIT_FAILS)
  (void)host;
  (void)ctx;
  return tb_fake_set_error(TB_ERROR_UNAVAILABLE, "broken: no license for this machine");
#else
  tb_status status = tbv_init(host, ctx);
  if (status == TB_OK) *ctx = (tb_context)(void *)&g_context_token;
  return status;
#endif
}

static void counting_finalize(tb_context ctx) {
  if (ctx == (tb_context)(void *)&g_context_token) g_finalizes++;
}

static future_vendor g_vendor = {
    .base = {.struct_size = sizeof(tb_vendor),
             .abi_major = TB_ABI_VERSION_MAJOR,
             .abi_minor = TB_ABI_VERSION_MINOR,
             .device_type = BAD_DEVICE_TYPE,
             .vendor_name = "broken vendor",
             .vendor_version = "0.0",
             .init = counting_init,
             .finalize = counting_finalize,
             .last_error = tbv_last_error,
             .device = &g_device,
             .memory = &g_memory,
             .stream = &g_stream,
             .event = &g_event},
    .next_group = NULL,
    .something_new = 1,
};

TB_EXPORT const tb_vendor *tb_vendor_get(uint32_t abi_major, const char **error) {
  (void)abi_major;
#if defined(BAD_NULL_TABLE)
  *error = "license for device type 'acme' expired on 2026-01-01";
  return NULL;
#elif defined(BAD_WRONG_MAJOR)
  g_vendor.base.abi_major = 3;
  g_vendor.base.abi_minor = 5;
#elif defined(BAD_TABLE_TOO_SMALL)
  g_vendor.base.struct_size = TB_STRUCT_SIZE(tb_vendor, stream);
#elif defined(BAD_GROUP_TOO_SMALL)
  g_memory.struct_size = TB_STRUCT_SIZE(tb_memory_api, copy_h2d);
#elif defined(BAD_MISSING_FUNCTIONS)
  g_memory.copy_h2d = NULL;
  g_stream.query = NULL;
  g_event.synchronize = NULL;
#elif defined(BAD_RESERVED_NAME)
  /* device type set to "cuda" through BAD_DEVICE_TYPE */
#elif defined(BAD_DUPLICATE_KERNEL)
  g_kernels.count = 3; /* the third repeats "add.out" */
  g_vendor.base.kernels = &g_kernels;
#elif defined(BAD_KERNEL_FLAGS)
  static tb_kernel_api flagged = {sizeof(tb_kernel_api), 2, k_flagged_kernels};
  g_vendor.base.kernels = &flagged;
#elif defined(BAD_INIT_FAILS)
  /* counting_init fails */
#elif defined(GOOD_NO_INIT)
  g_vendor.base.struct_size = TB_VENDOR_V2_0_SIZE; /* the smallest 2.0 table */
  g_vendor.base.init = NULL;                       /* optional: every call gets NULL */
  g_vendor.base.finalize = NULL;
#elif defined(GOOD_FUTURE_MINOR)
  g_vendor.base.struct_size = sizeof g_vendor;
  g_vendor.base.kernels = &g_kernels;
  g_vendor.base.abi_minor = TB_ABI_VERSION_MINOR + 7;
  g_stream.priority_range = NULL; /* optional: allowed to be absent */
  g_event.elapsed_time = NULL;
#else
#error "define one BAD_* or GOOD_* variant"
#endif
  (void)error;
  return &g_vendor.base;
}

#endif
