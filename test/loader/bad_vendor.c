/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Deliberately broken vendor libraries, one per loader error, selected by a BAD_* macro at
 * compile time.  Each starts from fake's slots (linked from tb_fake_defaults) and breaks one
 * thing in the table it returns from its own, strong tb_vendor_get.
 */
#include <string.h>
#include <torch_backend/fake.h>

#if defined(BAD_NO_ENTRY)

/* A shared library that is not a vendor at all: no tb_vendor_get. */
TB_EXPORT int not_a_vendor(void) { return 42; }

#else

static const tb_device_api k_device = {sizeof(tb_device_api), tbv_device_count,
                                       tbv_device_get_properties, tbv_device_synchronize,
                                       tbv_device_reset};
static tb_memory_api g_memory = {
    sizeof(tb_memory_api),     tbv_memory_device_malloc,  tbv_memory_device_free,
    tbv_memory_host_malloc,    tbv_memory_host_free,      tbv_memory_copy_h2d,
    tbv_memory_copy_d2h,       tbv_memory_copy_d2d,       tbv_memory_copy_h2d_async,
    tbv_memory_copy_d2h_async, tbv_memory_copy_d2d_async, tbv_memory_memset_async,
    tbv_memory_get_info};
static tb_stream_api g_stream = {sizeof(tb_stream_api),     tbv_stream_create,
                                 tbv_stream_destroy,        tbv_stream_query,
                                 tbv_stream_synchronize,    tbv_stream_wait_event,
                                 tbv_stream_priority_range, tbv_stream_inject_fault};
static tb_event_api g_event = {sizeof(tb_event_api),  tbv_event_create, tbv_event_destroy,
                               tbv_event_record,      tbv_event_query,  tbv_event_synchronize,
                               tbv_event_elapsed_time};

/* A table from a vendor built against a later minor: two fields appended. */
typedef struct future_vendor {
  tb_vendor base;
  const void *next_group;
  int something_new;
} future_vendor;

static tb_status noop_kernel(tb_stream stream, const tb_value *args, int32_t num_args) {
  (void)stream;
  (void)args;
  (void)num_args;
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

static future_vendor g_vendor = {
    .base = {sizeof(tb_vendor), TB_ABI_VERSION_MAJOR, TB_ABI_VERSION_MINOR, BAD_DEVICE_TYPE,
             "broken vendor", "0.0", tbv_last_error, &k_device, &g_memory, &g_stream, &g_event},
    .next_group = NULL,
    .something_new = 1,
};

TB_EXPORT const tb_vendor *tb_vendor_get(uint32_t abi_major, const char **error) {
  (void)abi_major;
#if defined(BAD_NULL_TABLE)
  *error = "license for device type 'acme' expired on 2026-01-01";
  return NULL;
#elif defined(BAD_WRONG_MAJOR)
  g_vendor.base.abi_major = 2;
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
#elif defined(GOOD_V1_0)
  g_vendor.base.struct_size = TB_VENDOR_V1_0_SIZE; /* a vendor built against ABI 1.0 */
  g_vendor.base.abi_minor = 0;
  g_vendor.base.kernels = &g_kernels; /* beyond its struct_size: must be ignored */
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
