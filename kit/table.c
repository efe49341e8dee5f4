/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The kit's kernel-call accessors and kernel-table check (vendor_kit_kernels.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <torch_backend/vendor_kit_kernels.h>

const tb_value *tbk_arg(const tb_kernel_call *call, int i) {
  return call != NULL && call->args != NULL && i >= 0 && i < call->num_args ? &call->args[i] : NULL;
}

const tb_tensor *tbk_arg_tensor(const tb_kernel_call *call, int i) {
  const tb_value *value = tbk_arg(call, i);
  return value != NULL && value->kind == TB_VALUE_TENSOR ? value->as.tensor : NULL;
}

bool tbk_value_number(const tb_value *value, double *out) {
  if (value == NULL) return false;
  switch (value->kind) {
    case TB_VALUE_INT:
      *out = (double)value->as.i;
      return true;
    case TB_VALUE_DOUBLE:
      *out = value->as.f;
      return true;
    case TB_VALUE_BOOL:
      *out = value->as.b != 0;
      return true;
    default:
      return false;
  }
}

bool tbk_arg_number(const tb_kernel_call *call, int i, double *out) {
  return tbk_value_number(tbk_arg(call, i), out);
}

bool tbk_arg_int(const tb_kernel_call *call, int i, int64_t *out) {
  const tb_value *value = tbk_arg(call, i);
  if (value == NULL || value->kind != TB_VALUE_INT) return false;
  *out = value->as.i;
  return true;
}

bool tbk_arg_bool(const tb_kernel_call *call, int i, bool *out) {
  const tb_value *value = tbk_arg(call, i);
  if (value == NULL || value->kind != TB_VALUE_BOOL) return false;
  *out = value->as.b != 0;
  return true;
}

const int64_t *tbk_arg_ints(const tb_kernel_call *call, int i, int64_t *count) {
  const tb_value *value = tbk_arg(call, i);
  if (value == NULL || value->kind != TB_VALUE_INT_LIST) return NULL;
  *count = value->as.ints.count;
  return value->as.ints.items;
}

const tb_tensor *const *tbk_arg_tensors(const tb_kernel_call *call, int i, int64_t *count) {
  const tb_value *value = tbk_arg(call, i);
  if (value == NULL || value->kind != TB_VALUE_TENSOR_LIST) return NULL;
  *count = value->as.tensors.count;
  return value->as.tensors.items;
}

bool tbk_arg_is_none(const tb_kernel_call *call, int i) {
  const tb_value *value = tbk_arg(call, i);
  return value != NULL && value->kind == TB_VALUE_NONE;
}

bool tbk_arg_dtype(const tb_kernel_call *call, int i, tb_dtype *out) {
  const tb_value *value = tbk_arg(call, i);
  if (value == NULL || value->kind != TB_VALUE_DTYPE) return false;
  *out = value->as.dtype;
  return true;
}

const char *tbk_arg_string(const tb_kernel_call *call, int i) {
  const tb_value *value = tbk_arg(call, i);
  return value != NULL && value->kind == TB_VALUE_STRING ? value->as.string : NULL;
}

const int *tbk_arg_bools(const tb_kernel_call *call, int i, int64_t *count) {
  const tb_value *value = tbk_arg(call, i);
  if (value == NULL || value->kind != TB_VALUE_BOOL_LIST) return NULL;
  *count = value->as.bools.count;
  return value->as.bools.items;
}

const tb_rng_key *tbk_arg_rng(const tb_kernel_call *call, int i) {
  const tb_value *value = tbk_arg(call, i);
  return value != NULL && value->kind == TB_VALUE_RNG ? &value->as.rng : NULL;
}

/* Appends one problem to msg, after "; " unless it is the first. */
static void problem(char *msg, size_t msg_size, int *problems, const char *format, ...) {
  if (msg != NULL && msg_size > 0) {
    size_t used = strlen(msg);
    if (*problems > 0) used += (size_t)snprintf(msg + used, msg_size - used, "; ");
    if (used < msg_size) {
      va_list args;
      va_start(args, format);
      vsnprintf(msg + used, msg_size - used, format, args);
      va_end(args);
    }
  }
  (*problems)++;
}

tb_status tbk_kernels_validate(const tb_kernel_api *api, char *msg, size_t msg_size) {
  int problems = 0;
  if (msg != NULL && msg_size > 0) msg[0] = '\0';
  if (api == NULL) {
    problem(msg, msg_size, &problems, "the table is NULL");
  } else if (api->struct_size < TB_KERNEL_API_V2_0_SIZE) {
    problem(msg, msg_size, &problems, "the table's struct_size is %zu", api->struct_size);
  } else if (api->count < 0 || (api->count > 0 && api->kernels == NULL)) {
    problem(msg, msg_size, &problems, "the table has count %" PRId64 " and %s kernels", api->count,
            api->kernels == NULL ? "no" : "some");
  } else {
    for (int64_t i = 0; i < api->count; i++) {
      const tb_kernel *k = api->kernels[i];
      if (k == NULL) {
        problem(msg, msg_size, &problems, "kernel %" PRId64 " is NULL", i);
        continue;
      }
      const char *name = k->name != NULL ? k->name : "";
      if (k->struct_size < TB_KERNEL_V2_0_SIZE) {
        problem(msg, msg_size, &problems, "kernel %" PRId64 " (\"%s\"): struct_size is %zu", i,
                name, k->struct_size);
        continue; /* its other fields may not be there */
      }
      if (*name == '\0') problem(msg, msg_size, &problems, "kernel %" PRId64 " has no name", i);
      if (k->fn == NULL) {
        problem(msg, msg_size, &problems, "kernel %" PRId64 " (\"%s\"): fn is NULL", i, name);
      }
      if ((k->dtypes & ~(uint64_t)TBK_DTYPES_ALL) != 0) {
        problem(msg, msg_size, &problems,
                "kernel %" PRId64 " (\"%s\"): unknown dtype bits 0x%" PRIx64, i, name,
                k->dtypes & ~(uint64_t)TBK_DTYPES_ALL);
      }
      if (k->flags != 0) {
        problem(msg, msg_size, &problems,
                "kernel %" PRId64 " (\"%s\"): flags 0x%" PRIx32 " (must be 0)", i, name, k->flags);
      }
      for (int64_t j = 0; j < i && *name != '\0'; j++) {
        const tb_kernel *earlier = api->kernels[j];
        if (earlier != NULL && earlier->name != NULL && strcmp(earlier->name, name) == 0) {
          problem(msg, msg_size, &problems,
                  "kernel %" PRId64 " (\"%s\"): duplicate name of kernel %" PRId64, i, name, j);
          break;
        }
      }
    }
  }
  return problems > 0 ? TB_ERROR_INVALID_ARGUMENT : TB_OK;
}
