/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Checks of the kernel table's schemas (vendor.h, "Schemas", ABI 2.0): every kernel states the
 * ATen schema it was written for, naming its own operator, and that schema is the one of the
 * torch release the vendor targets.  The suite is C and runs without torch, so the comparison
 * uses a list of that release's schemas (`python -m torch_backend.schemas > FILE`, given to
 * tb-conformance as --schemas FILE) and is textual: both schemas are split into arguments and
 * returns, default values dropped, spacing normalised, then compared item by item.  It refuses
 * what torch_backend refuses at load -- a differing schema, an operator the list lacks, an
 * argument type no tb_value carries -- and is stricter in one respect: a schema spelled
 * differently from how PyTorch prints it ("Optional[Tensor]" for "Tensor?") is reported
 * too, so vendors copy the printed form.  These checks read the table only; they call nothing.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

/* ---- the schema list ---- */

static char **g_schemas; /* one schema per line, "aten::" prefix as printed */
static size_t g_schema_count;
static char g_schema_source[512];

tb_status tb_conformance_load_schemas(const char *path, char *error, size_t error_size) {
  FILE *file = fopen(path, "r");
  if (file == NULL) {
    if (error != NULL) snprintf(error, error_size, "cannot read schema list '%s'", path);
    return TB_ERROR_INVALID_ARGUMENT;
  }
  char line[8192];
  size_t capacity = 0;
  snprintf(g_schema_source, sizeof g_schema_source, "%s", path);
  while (fgets(line, sizeof line, file) != NULL) {
    line[strcspn(line, "\r\n")] = '\0';
    if (line[0] == '#') {
      snprintf(g_schema_source, sizeof g_schema_source, "%s", line + 1 + (line[1] == ' '));
      continue;
    }
    if (line[0] == '\0') continue;
    if (g_schema_count == capacity) {
      capacity = capacity ? 2 * capacity : 4096;
      char **grown = realloc(g_schemas, capacity * sizeof *grown);
      if (grown == NULL) break;
      g_schemas = grown;
    }
    g_schemas[g_schema_count] = strdup(line);
    if (g_schemas[g_schema_count] == NULL) break;
    g_schema_count++;
  }
  fclose(file);
  if (g_schema_count == 0) {
    if (error != NULL) snprintf(error, error_size, "schema list '%s' holds no schema", path);
    return TB_ERROR_INVALID_ARGUMENT;
  }
  return TB_OK;
}

/* ---- parsing, as far as comparing needs ---- */

enum { MAX_ITEMS = 64, ITEM_SIZE = 256 };

typedef struct parsed_schema {
  char name[ITEM_SIZE]; /* "add.out", without "aten::" */
  int arg_count, ret_count;
  char args[MAX_ITEMS][ITEM_SIZE]; /* "Tensor(a!) out", "*" for the keyword-only marker */
  char rets[MAX_ITEMS][ITEM_SIZE];
} parsed_schema;

/* Copies [begin, end) into out with spacing normalised (runs of blanks become one space,
 * none at either end); false when it does not fit. */
static bool normalise(const char *begin, const char *end, char *out, size_t size) {
  size_t n = 0;
  bool space = false;
  while (begin < end && isspace((unsigned char)*begin)) begin++;
  while (end > begin && isspace((unsigned char)end[-1])) end--;
  for (; begin < end; begin++) {
    if (isspace((unsigned char)*begin)) {
      space = true;
      continue;
    }
    if (space && n + 1 < size) out[n++] = ' ';
    space = false;
    if (n + 1 >= size) return false;
    out[n++] = *begin;
  }
  out[n] = '\0';
  return true;
}

/* Splits "a, b=[1, 2], c" (between a list's brackets) at top-level commas into items without
 * their defaults.  Returns the item count, or -1 when malformed or too long. */
static int split(const char *begin, const char *end, char items[][ITEM_SIZE]) {
  int count = 0, depth = 0;
  const char *start = begin, *equals = NULL;
  bool quoted = false;
  for (const char *c = begin; c <= end; c++) {
    if (c < end && quoted) {
      if (*c == '"' || *c == '\'') quoted = false;
      continue;
    }
    if (c < end && (*c == '"' || *c == '\'')) {
      quoted = true;
    } else if (c < end && (*c == '(' || *c == '[')) {
      depth++;
    } else if (c < end && (*c == ')' || *c == ']')) {
      if (--depth < 0) return -1;
    } else if (c < end && *c == '=' && depth == 0 && equals == NULL) {
      equals = c;
    } else if (c == end || (*c == ',' && depth == 0)) {
      if (count == MAX_ITEMS) return -1;
      if (!normalise(start, equals != NULL ? equals : c, items[count], ITEM_SIZE)) return -1;
      if (items[count][0] == '\0') {
        if (c == end && count == 0) return 0; /* "()" */
        return -1;
      }
      count++;
      start = c + 1;
      equals = NULL;
    }
  }
  return depth == 0 && !quoted ? count : -1;
}

/* Parses "aten::name.overload(args) -> returns"; false when malformed. */
static bool parse(const char *text, parsed_schema *out) {
  memset(out, 0, sizeof *out);
  const char *open = strchr(text, '(');
  if (open == NULL) return false;
  const char *name = text;
  if (strncmp(name, "aten::", 6) == 0) name += 6;
  if (!normalise(name, open, out->name, sizeof out->name) || out->name[0] == '\0') return false;
  int depth = 0;
  const char *close = NULL;
  for (const char *c = open; *c != '\0' && close == NULL; c++) {
    if (*c == '(') depth++;
    if (*c == ')' && --depth == 0) close = c;
  }
  if (close == NULL) return false;
  out->arg_count = split(open + 1, close, out->args);
  const char *arrow = strstr(close, "->");
  if (out->arg_count < 0 || arrow == NULL) return false;
  const char *ret = arrow + 2, *ret_end = ret + strlen(ret);
  while (ret < ret_end && isspace((unsigned char)*ret)) ret++;
  while (ret_end > ret && isspace((unsigned char)ret_end[-1])) ret_end--;
  if (ret < ret_end && *ret == '(' && ret_end[-1] == ')') {
    out->ret_count = split(ret + 1, ret_end - 1, out->rets);
  } else {
    out->ret_count = split(ret, ret_end, out->rets);
  }
  return out->ret_count >= 0;
}

/* Whether a tb_value kind carries argument `item` ("Tensor(a!)? out"); false also for "*". */
static bool carried(const char *item, char *type, size_t size) {
  const char *space = strrchr(item, ' ');
  size_t n = 0;
  for (const char *c = item; c < (space ? space : item + strlen(item)) && n + 1 < size; c++) {
    if (*c == '(') { /* drop the alias annotation */
      while (*c != '\0' && *c != ')') c++;
      continue;
    }
    type[n++] = *c;
  }
  type[n] = '\0';
  char base[ITEM_SIZE];
  snprintf(base, sizeof base, "%s", type);
  bool list = false;
  char *bracket = strchr(base, '[');
  if (bracket != NULL) {
    list = true;
    *bracket = '\0';
  } else if (n > 0 && base[strlen(base) - 1] == '?') {
    base[strlen(base) - 1] = '\0'; /* an optional scalar: as the scalar */
  }
  static const char *const scalars[] = {"Tensor", "int", "SymInt",     "float",    "bool",
                                        "Scalar", "str", "ScalarType", "Generator"};
  static const char *const elements[] = {"Tensor", "Tensor?", "int", "SymInt", "bool"};
  const char *const *names = list ? elements : scalars;
  size_t count = list ? sizeof elements / sizeof *elements : sizeof scalars / sizeof *scalars;
  for (size_t i = 0; i < count; i++) {
    if (strcmp(base, names[i]) == 0) return true;
  }
  return false;
}

/* An item's type: what precedes its name ("Tensor(a!)" of "Tensor(a!) out"). */
static void type_of(const char *item, char *type, size_t size) {
  size_t n = strcspn(item, " ");
  snprintf(type, size, "%.*s", (int)n, item);
}

/* Why torch_backend's wrapper cannot provide the operator's outputs (BoxedKernels.cpp: out
 * arguments are tensors at the end; a kernel that writes arguments returns only those; one
 * that writes none returns plain tensors), or NULL. */
static const char *outputs_problem(const parsed_schema *schema) {
  bool keyword = false, outs = false, writes = false;
  char type[ITEM_SIZE];
  for (int i = 0; i < schema->arg_count; i++) {
    if (strcmp(schema->args[i], "*") == 0) {
      keyword = true;
      continue;
    }
    type_of(schema->args[i], type, sizeof type);
    bool written = strstr(type, "!)") != NULL;
    writes |= written;
    if (keyword && written) {
      outs = true;
      if (strncmp(type, "Tensor(", 7) != 0 || strchr(type, '[') != NULL) {
        return "its out arguments are not tensors at the end of the schema";
      }
    } else if (outs) {
      return "its out arguments are not tensors at the end of the schema";
    }
  }
  for (int i = 0; i < schema->ret_count; i++) {
    type_of(schema->rets[i], type, sizeof type);
    if (writes && strchr(type, '(') == NULL) return "it writes arguments and returns new tensors";
    if (!writes && strcmp(type, "Tensor") != 0) {
      return "it returns something other than tensors (only tensors can be allocated for a "
             "kernel)";
    }
  }
  return NULL;
}

/* Kernels whose argument lists vendor.h fixes itself ("Attention", "Quantized tensors"):
 * torch_backend calls them from operators of its own, not through the generic wrapper whose
 * limits outputs_problem mirrors. */
static bool has_own_arguments(const char *name) {
  return strcmp(name, "_scaled_dot_product_fused_attention_overrideable") == 0 ||
         strcmp(name, "_scaled_dot_product_fused_attention_overrideable_backward") == 0 ||
         strcmp(name, "quantize_per_tensor") == 0 || strcmp(name, "dequantize.self") == 0;
}

static const char *listed_schema(const char *name) {
  for (size_t i = 0; i < g_schema_count; i++) {
    const char *s = g_schemas[i];
    if (strncmp(s, "aten::", 6) == 0) s += 6;
    size_t n = strlen(name);
    if (strncmp(s, name, n) == 0 && s[n] == '(') return g_schemas[i];
  }
  return NULL;
}

static const char *kernel_schema(const tb_kernel *kernel) {
  return TB_STRUCT_HAS_FIELD(kernel, tb_kernel, schema) ? kernel->schema : NULL;
}

/* Appends printf-style text to `buffer` (of `size`), truncating. */
static void append(char *buffer, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buffer, size_t size, const char *format, ...) {
  size_t used = strlen(buffer);
  if (used + 1 >= size) return;
  va_list args;
  va_start(args, format);
  vsnprintf(buffer + used, size - used, format, args);
  va_end(args);
}

/* ---- checks ---- */

static tb_check_outcome check_schema_stated(tb_check_context *ctx) {
  const tb_kernel_api *api = &ctx->vendor->kernels;
  if (api->count == 0) return tbc_skip(ctx, "the vendor publishes no kernels");
  char unchecked[1024] = "", misnamed[sizeof ctx->message] = "";
  int unchecked_count = 0;
  for (int64_t i = 0; i < api->count; i++) {
    const tb_kernel *kernel = api->kernels[i];
    const char *schema = kernel_schema(kernel);
    parsed_schema parsed;
    if (schema == NULL) {
      append(unchecked, sizeof unchecked, "%s%s", unchecked_count++ ? ", " : "", kernel->name);
    } else if (parse(schema, &parsed) && strcmp(parsed.name, kernel->name) != 0) {
      append(misnamed, sizeof misnamed, "kernel '%s' states the schema of operator '%s' (%s); ",
             kernel->name, parsed.name, schema);
    }
  }
  /* Through append (which truncates on purpose): a message longer than the buffer is cut. */
  ctx->message[0] = '\0';
  append(ctx->message, sizeof ctx->message, "%s%lld kernels state their schemas", misnamed,
         (long long)(api->count - unchecked_count));
  if (unchecked_count > 0) {
    append(ctx->message, sizeof ctx->message, "; %d unchecked (no schema, used as they are): %s",
           unchecked_count, unchecked);
  }
  return misnamed[0] != '\0' ? TB_CHECK_FAIL : TB_CHECK_PASS;
}

/* Why torch_backend would refuse `kernel` against the loaded list, into `why`; false if not. */
static bool refused(const tb_kernel *kernel, char *why, size_t size) {
  const char *schema = kernel_schema(kernel);
  if (schema == NULL) return false;
  const char *listed = listed_schema(kernel->name);
  if (listed == NULL) {
    snprintf(why, size, "%s: the list has no operator named '%s'", kernel->name, kernel->name);
    return true;
  }
  static parsed_schema stated, actual; /* large: kept off the stack */
  if (!parse(schema, &stated)) {
    snprintf(why, size, "%s: its schema does not parse: %s", kernel->name, schema);
    return true;
  }
  if (!parse(listed, &actual)) return false; /* the list's own: trusted */
  if (strcmp(stated.name, kernel->name) != 0) {
    snprintf(why, size, "%s: its schema is for operator %s (kernel: %s)", kernel->name, stated.name,
             schema);
    return true;
  }
  const char *difference = NULL;
  char detail[600] = "";
  for (int i = 0; i < stated.arg_count && i < actual.arg_count && !difference; i++) {
    if (strcmp(stated.args[i], actual.args[i]) != 0) {
      snprintf(detail, sizeof detail, "argument %d is `%s` here and `%s` in torch's", i,
               stated.args[i], actual.args[i]);
      difference = detail;
    }
  }
  if (!difference && stated.arg_count != actual.arg_count) {
    snprintf(detail, sizeof detail, "%d arguments here, %d in torch's", stated.arg_count,
             actual.arg_count);
    difference = detail;
  }
  for (int i = 0; i < stated.ret_count && i < actual.ret_count && !difference; i++) {
    if (strcmp(stated.rets[i], actual.rets[i]) != 0) {
      snprintf(detail, sizeof detail, "return %d is `%s` here and `%s` in torch's", i,
               stated.rets[i], actual.rets[i]);
      difference = detail;
    }
  }
  if (!difference && stated.ret_count != actual.ret_count) {
    snprintf(detail, sizeof detail, "%d returns here, %d in torch's", stated.ret_count,
             actual.ret_count);
    difference = detail;
  }
  if (difference) {
    snprintf(why, size, "%s: %s (kernel: %s; torch: %s)", kernel->name, difference, schema, listed);
    return true;
  }
  for (int i = 0; i < actual.arg_count; i++) {
    char type[ITEM_SIZE];
    if (strcmp(actual.args[i], "*") != 0 && !carried(actual.args[i], type, sizeof type)) {
      snprintf(why, size, "%s: argument `%s` has type %s, which no tb_value kind carries",
               kernel->name, actual.args[i], type);
      return true;
    }
  }
  const char *problem = has_own_arguments(kernel->name) ? NULL : outputs_problem(&actual);
  if (problem != NULL) {
    snprintf(why, size, "%s: %s", kernel->name, problem);
    return true;
  }
  return false;
}

static tb_check_outcome check_schemas_match(tb_check_context *ctx) {
  const tb_kernel_api *api = &ctx->vendor->kernels;
  if (g_schema_count == 0) {
    return tbc_skip(ctx,
                    "no schema list (python -m torch_backend.schemas > FILE; "
                    "tb-conformance --schemas FILE)");
  }
  if (api->count == 0) return tbc_skip(ctx, "the vendor publishes no kernels");
  char reasons[sizeof ctx->message] = "";
  int count = 0, checked = 0;
  for (int64_t i = 0; i < api->count; i++) {
    char why[1024];
    checked += kernel_schema(api->kernels[i]) != NULL;
    if (refused(api->kernels[i], why, sizeof why)) {
      append(reasons, sizeof reasons, "; %s", why);
      count++;
    }
  }
  if (count > 0) {
    return tbc_fail(ctx, "%d of %lld kernels are refused%s", count, (long long)api->count, reasons);
  }
  snprintf(ctx->message, sizeof ctx->message, "%d kernels match %s", checked, g_schema_source);
  return TB_CHECK_PASS;
}

const tb_check tbc_kernel_checks[] = {
    {"kernels", "schema_stated",
     "every kernel states the ATen schema it was written for, of its own operator (kernels "
     "without one are listed as unchecked)",
     check_schema_stated},
    {"kernels", "schemas_match",
     "every stated schema is the one of the torch release in the --schemas list, with arguments "
     "a tb_value carries: torch_backend would not refuse the kernel",
     check_schemas_match},
};
const size_t tbc_kernel_check_count = sizeof tbc_kernel_checks / sizeof tbc_kernel_checks[0];
