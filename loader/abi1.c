/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The adapter that lets a vendor built against any ABI 1.x header load into torch_backend 2.x
 * unchanged: a 2.0 table whose every function forwards to the 1.x table.  The context of every
 * call is the adapter itself (1.x vendors have no context); group slots are generated from
 * vendor_slots.h; kernels share one adapter function that converts a tb_kernel_call into the
 * 1.x call (stream, args, num_args), turning tensor lists of pointers back into arrays of
 * tb_tensor structs (an absent element: data NULL, ndim -1, as 1.x specified).
 */
#define _GNU_SOURCE

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi1.h"

struct tb1_adapter {
  const tb1_vendor *v1;
  /* The 1.x groups, normalised to full size (absent slots NULL). */
  tb1_device_api device;
  tb1_memory_api memory;
  tb1_stream_api stream;
  tb1_event_api event;
  /* The 2.0 groups handed out. */
  struct {
    tb_device_api device;
    tb_memory_api memory;
    tb_stream_api stream;
    tb_event_api event;
    tb_kernel_api kernels;
  } v2;
  tb_kernel *kernels; /* one per 1.x kernel, data = the 1.x kernel */
  const tb_kernel **kernel_ptrs;
  tb_vendor table;
};

static tb_status fail(char *error, size_t error_size, tb_status status, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static tb_status fail(char *error, size_t error_size, tb_status status, const char *format, ...) {
  if (error != NULL && error_size > 0) {
    va_list args;
    va_start(args, format);
    vsnprintf(error, error_size, format, args);
    va_end(args);
  }
  return status;
}

/* ---- errors of the adapter's own making (a kernel call it could not convert) ---- */

static _Thread_local int t_own_error; /* the calling thread's last failure is the adapter's */
static _Thread_local char t_message[256];

/* A forwarded call's status: a failure of the 1.x vendor makes last_error the vendor's again. */
static tb_status pass(tb_status status) {
  if (status != TB_OK && status != TB_ERROR_NOT_READY) t_own_error = 0;
  return status;
}

static const char *adapt_last_error(tb_context ctx) {
  const tb1_adapter *a = (const tb1_adapter *)ctx;
  if (t_own_error || a == NULL) return t_message;
  const char *message = a->v1->last_error();
  return message != NULL ? message : "";
}

/* ---- the group slots: drop the context, call the 1.x function ---- */

#define ADAPT(gt, gf, slot, req, since, ret, params, names) \
  TB1_IF_V1(                                                \
      since, static ret adapt_##gf##_##slot params {        \
        const tb1_adapter *a = (const tb1_adapter *)ctx;    \
        return pass(a->gf.slot(TB_SLOT_AFTER_CTX names));   \
      })
TB_VENDOR_SLOTS(ADAPT)
#undef ADAPT

/* ---- kernels ---- */

/* Arguments with up to this many values and list elements convert on the stack. */
enum { STACK_VALUES = 32, STACK_TENSORS = 64 };

static tb_status adapt_kernel(tb_context ctx, const tb_kernel_call *call) {
  (void)ctx;
  const tb1_kernel *kernel = (const tb1_kernel *)call->kernel->data;
  int32_t n = call->num_args;
  int64_t elements = 0;
  for (int32_t i = 0; i < n; i++) {
    if (call->args[i].kind == TB_VALUE_TENSOR_LIST) elements += call->args[i].as.tensors.count;
  }
  if (elements == 0) return pass(kernel->fn(call->stream, call->args, n));

  tb_value stack_values[STACK_VALUES];
  tb_tensor stack_tensors[STACK_TENSORS];
  tb_value *values = n <= STACK_VALUES ? stack_values : malloc((size_t)n * sizeof *values);
  tb_tensor *tensors = elements <= STACK_TENSORS ? stack_tensors
                       : (uint64_t)elements > SIZE_MAX / sizeof *tensors
                           ? NULL
                           : malloc((size_t)elements * sizeof *tensors);
  if (values == NULL || tensors == NULL) {
    if (values != stack_values) free(values);
    if (tensors != stack_tensors) free(tensors);
    t_own_error = 1;
    snprintf(t_message, sizeof t_message,
             "torch_backend's ABI 1.x adapter: out of host memory converting the %lld tensor "
             "list elements of a call to kernel '%s'",
             (long long)elements, kernel->name);
    return TB_ERROR_OUT_OF_MEMORY;
  }
  tb_tensor *next = tensors;
  for (int32_t i = 0; i < n; i++) {
    values[i] = call->args[i];
    if (values[i].kind != TB_VALUE_TENSOR_LIST) continue;
    const tb_tensor_list *list = &call->args[i].as.tensors;
    tb_tensor *first = next;
    for (int64_t k = 0; k < list->count; k++, next++) {
      const tb_tensor *item = list->items[k];
      memset(next, 0, sizeof *next);
      if (item == NULL) {
        next->ndim = -1; /* 1.x: an absent optional element */
      } else {
        memcpy(next, item, item->struct_size < sizeof *next ? item->struct_size : sizeof *next);
      }
      next->struct_size = sizeof *next;
    }
    /* 1.x's tb_tensor_list::items is `const tb_tensor *`: the array itself. */
    values[i].as.tensors.items = (const tb_tensor *const *)(const void *)first;
  }
  tb_status status = pass(kernel->fn(call->stream, values, n));
  if (values != stack_values) free(values);
  if (tensors != stack_tensors) free(tensors);
  return status;
}

/* ---- building the 2.0 table ---- */

/* Copies a 1.x group of `size` bytes (its struct_size) into the full-size `dst`. */
static void normalise(void *dst, size_t dst_size, const void *src, size_t size) {
  memset(dst, 0, dst_size);
  memcpy(dst, src, size < dst_size ? size : dst_size);
  *(size_t *)dst = dst_size;
}

tb_status tb1_adapter_create(const tb1_vendor *v1, const char *path, tb1_adapter **out,
                             const tb_vendor **table, tb_context *context, char *error,
                             size_t error_size) {
  const char *type =
      v1->struct_size >= TB_STRUCT_SIZE(tb1_vendor, device_type) && v1->device_type != NULL
          ? v1->device_type
          : "?";
  if (v1->struct_size < TB1_VENDOR_MIN_SIZE) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s': its ABI %u.%u tb_vendor table is %zu bytes but ABI 1.0 "
                "requires at least %zu (struct_size too small)",
                path, v1->abi_major, v1->abi_minor, v1->struct_size, (size_t)TB1_VENDOR_MIN_SIZE);
  }
  struct {
    const void *group;
    const char *name;
    size_t min;
  } groups[] = {{v1->device, "device", TB1_DEVICE_API_MIN_SIZE},
                {v1->memory, "memory", TB1_MEMORY_API_MIN_SIZE},
                {v1->stream, "stream", TB1_STREAM_API_MIN_SIZE},
                {v1->event, "event", TB1_EVENT_API_MIN_SIZE}};
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
    if (groups[g].group == NULL) {
      return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                  "vendor library '%s' (device type '%s', ABI %u.%u): the %s group is missing "
                  "(tb_vendor.%s is NULL)",
                  path, type, v1->abi_major, v1->abi_minor, groups[g].name, groups[g].name);
    }
    size_t size = *(const size_t *)groups[g].group;
    if (size < groups[g].min) {
      return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                  "vendor library '%s' (device type '%s', ABI %u.%u): its tb_%s_api is %zu "
                  "bytes but ABI 1.0 requires at least %zu (struct_size too small)",
                  path, type, v1->abi_major, v1->abi_minor, groups[g].name, size, groups[g].min);
    }
  }
  const tb1_kernel_api *kernels =
      v1->struct_size >= TB_STRUCT_SIZE(tb1_vendor, kernels) ? v1->kernels : NULL;
  if (kernels != NULL && kernels->struct_size < TB1_KERNEL_API_MIN_SIZE) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s' (device type '%s'): its ABI 1.x tb_kernel_api is %zu bytes "
                "but ABI 1.1 requires at least %zu",
                path, type, kernels->struct_size, (size_t)TB1_KERNEL_API_MIN_SIZE);
  }
  int64_t count = kernels != NULL && kernels->count > 0 ? kernels->count : 0;
  if (kernels != NULL && (kernels->count < 0 || (kernels->count > 0 && kernels->kernels == NULL))) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s' (device type '%s'): its kernel table has count %lld and "
                "kernels %p",
                path, type, (long long)kernels->count, (const void *)kernels->kernels);
  }

  tb1_adapter *a = calloc(1, sizeof *a);
  tb_kernel *converted = count > 0 ? calloc((size_t)count, sizeof *converted) : NULL;
  const tb_kernel **pointers = count > 0 ? calloc((size_t)count, sizeof *pointers) : NULL;
  if (a == NULL || (count > 0 && (converted == NULL || pointers == NULL))) {
    free(a);
    free(converted);
    free(pointers);
    return fail(error, error_size, TB_ERROR_OUT_OF_MEMORY, "tb_loader: out of host memory");
  }
  for (int64_t i = 0; i < count; i++) {
    const tb1_kernel *k = kernels->kernels[i];
    const char *problem = NULL;
    if (k == NULL) {
      problem = "is NULL";
    } else if (k->struct_size < TB1_KERNEL_MIN_SIZE) {
      problem = "has a struct_size smaller than ABI 1.1's tb_kernel";
    }
    if (problem != NULL) {
      free(a);
      free(converted);
      free(pointers);
      return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                  "vendor library '%s' (device type '%s'): kernel %lld %s", path, type,
                  (long long)i, problem);
    }
    /* Name, function and flags are validated with the 2.0 table, like any vendor's. */
    converted[i] = (tb_kernel){.struct_size = sizeof(tb_kernel),
                               .name = k->name,
                               .fn = k->fn != NULL ? adapt_kernel : NULL,
                               .dtypes = k->dtypes,
                               .flags = k->flags,
                               .schema = NULL,
                               .data = (void *)k};
    pointers[i] = &converted[i];
  }
  a->v1 = v1;
  a->kernels = converted;
  a->kernel_ptrs = pointers;
  normalise(&a->device, sizeof a->device, v1->device, v1->device->struct_size);
  normalise(&a->memory, sizeof a->memory, v1->memory, v1->memory->struct_size);
  normalise(&a->stream, sizeof a->stream, v1->stream, v1->stream->struct_size);
  normalise(&a->event, sizeof a->event, v1->event, v1->event->struct_size);
  a->v2.device.struct_size = sizeof a->v2.device;
  a->v2.memory.struct_size = sizeof a->v2.memory;
  a->v2.stream.struct_size = sizeof a->v2.stream;
  a->v2.event.struct_size = sizeof a->v2.event;
  /* A slot the 1.x vendor leaves NULL stays NULL: the 2.0 validation names missing required
   * ones and callers see absent optional ones. */
#define SET(gt, gf, slot, req, since, ret, params, names) \
  TB1_IF_V1(since, a->v2.gf.slot = a->gf.slot != NULL ? adapt_##gf##_##slot : NULL;)
  TB_VENDOR_SLOTS(SET)
#undef SET
  a->v2.kernels = (tb_kernel_api){sizeof(tb_kernel_api), count, pointers};
  a->table = (tb_vendor){
      .struct_size = sizeof(tb_vendor),
      .abi_major = TB_ABI_VERSION_MAJOR,
      .abi_minor = TB_ABI_VERSION_MINOR,
      .device_type = v1->device_type,
      .vendor_name = v1->vendor_name,
      .vendor_version = v1->vendor_version,
      .init = NULL,
      .finalize = NULL,
      .last_error = v1->last_error != NULL ? adapt_last_error : NULL,
      .device = &a->v2.device,
      .memory = &a->v2.memory,
      .stream = &a->v2.stream,
      .event = &a->v2.event,
      .kernels = kernels != NULL ? &a->v2.kernels : NULL,
  };
  *out = a;
  *table = &a->table;
  *context = (tb_context)a;
  return TB_OK;
}

void tb1_adapter_destroy(tb1_adapter *adapter) {
  if (adapter == NULL) return;
  free(adapter->kernels);
  free(adapter->kernel_ptrs);
  free(adapter);
}
