/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The vendor loader: resolve a name or path, dlopen, call the entry point (major 2, then 1),
 * validate the table against this build's ABI (wrapping a 1.x table in abi1.c's adapter), hand
 * out a normalised copy of it, and create and release the vendor's context.  No global mutable
 * state: everything lives in the handle.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <torch_backend/loader.h>
#include <torch_backend/vendor_slots.h>
#include <unistd.h>

#include "abi1.h"

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

/* Appends to a fixed buffer, never overflowing; returns the new length. */
static size_t append(char *buffer, size_t size, size_t length, const char *format, ...)
    __attribute__((format(printf, 4, 5)));

static size_t append(char *buffer, size_t size, size_t length, const char *format, ...) {
  if (length >= size) return length;
  va_list args;
  va_start(args, format);
  int written = vsnprintf(buffer + length, size - length, format, args);
  va_end(args);
  if (written < 0) return length;
  length += (size_t)written;
  return length < size ? length : size - 1;
}

static void copy_string(char *dst, size_t dst_size, const char *src) {
  snprintf(dst, dst_size, "%s", src != NULL ? src : "");
}

tb_status tb_loader_bundled_dir(char *dir, size_t dir_size) {
  Dl_info info;
  if (dir == NULL || dir_size == 0) return TB_ERROR_INVALID_ARGUMENT;
  /* An object of this library names it (ISO C converts no function pointer to void *). */
  static const char anchor = 0;
  if (dladdr(&anchor, &info) == 0 || info.dli_fname == NULL) {
    return TB_ERROR_INTERNAL;
  }
  char resolved[PATH_MAX];
  const char *path = realpath(info.dli_fname, resolved) != NULL ? resolved : info.dli_fname;
  const char *slash = strrchr(path, '/');
  if (slash == NULL) return TB_ERROR_INTERNAL;
  size_t length = (size_t)(slash - path);
  if (length + 1 > dir_size) return TB_ERROR_INTERNAL;
  memcpy(dir, path, length);
  dir[length] = '\0';
  return TB_OK;
}

/* Calls visit(dir) for each search directory in order; stops when visit returns non-zero. */
static int for_each_search_dir(int (*visit)(const char *dir, void *context), void *context) {
  const char *env = getenv(TB_LOADER_PATH_ENV);
  if (env != NULL) {
    const char *start = env;
    while (*start != '\0') {
      const char *end = strchr(start, ':');
      size_t length = end != NULL ? (size_t)(end - start) : strlen(start);
      if (length > 0 && length < PATH_MAX) {
        char dir[PATH_MAX];
        memcpy(dir, start, length);
        dir[length] = '\0';
        if (visit(dir, context)) return 1;
      }
      if (end == NULL) break;
      start = end + 1;
    }
  }
  char own[PATH_MAX];
  if (tb_loader_bundled_dir(own, sizeof own) == TB_OK && visit(own, context)) return 1;
  return 0;
}

typedef struct name_list {
  char names[64][32];
  size_t count;
} name_list;

static int collect_names(const char *dir, void *context) {
  name_list *list = context;
  DIR *handle = opendir(dir);
  if (handle == NULL) return 0;
  const size_t prefix = strlen(TB_LOADER_LIBRARY_PREFIX);
  const size_t suffix = strlen(TB_LOADER_LIBRARY_SUFFIX);
  struct dirent *entry;
  while ((entry = readdir(handle)) != NULL && list->count < 64) {
    size_t length = strlen(entry->d_name);
    if (length <= prefix + suffix || strncmp(entry->d_name, TB_LOADER_LIBRARY_PREFIX, prefix) ||
        strcmp(entry->d_name + length - suffix, TB_LOADER_LIBRARY_SUFFIX)) {
      continue;
    }
    size_t name_length = length - prefix - suffix;
    if (name_length >= sizeof list->names[0]) continue;
    char name[32];
    memcpy(name, entry->d_name + prefix, name_length);
    name[name_length] = '\0';
    int seen = 0;
    for (size_t i = 0; i < list->count; i++) seen |= strcmp(list->names[i], name) == 0;
    if (!seen) memcpy(list->names[list->count++], name, name_length + 1);
  }
  closedir(handle);
  return 0;
}

static int compare_names(const void *a, const void *b) { return strcmp(a, b); }

tb_status tb_loader_bundled_names(char *names, size_t names_size) {
  if (names == NULL || names_size == 0) return TB_ERROR_INVALID_ARGUMENT;
  name_list *list = calloc(1, sizeof *list);
  if (list == NULL) return TB_ERROR_OUT_OF_MEMORY;
  for_each_search_dir(collect_names, list);
  qsort(list->names, list->count, sizeof list->names[0], compare_names);
  size_t length = 0;
  names[0] = '\0';
  for (size_t i = 0; i < list->count; i++) {
    length = append(names, names_size, length, "%s%s", i ? ", " : "", list->names[i]);
  }
  free(list);
  return TB_OK;
}

typedef struct find_context {
  const char *file;
  char path[PATH_MAX];
  char searched[2048];
  size_t searched_length;
} find_context;

static int find_file(const char *dir, void *context) {
  find_context *find = context;
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", dir, find->file) >= (int)sizeof path) return 0;
  find->searched_length = append(find->searched, sizeof find->searched, find->searched_length,
                                 "%s%s", find->searched_length ? ", " : "", dir);
  if (access(path, F_OK) != 0) return 0;
  copy_string(find->path, sizeof find->path, path);
  return 1;
}

static int valid_identifier(const char *name, size_t max_length) {
  size_t length = strlen(name);
  if (length == 0 || length > max_length || !(name[0] >= 'a' && name[0] <= 'z')) return 0;
  for (size_t i = 0; i < length; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return 0;
  }
  return 1;
}

/* Device types PyTorch already owns; a vendor must not claim them. */
static const char *const k_reserved_types[] = {
    "cpu",  "cuda", "mkldnn", "opengl", "opencl", "ideep",         "hip",
    "ve",   "fpga", "maia",   "xla",    "lazy",   "vulkan",        "mps",
    "meta", "hpu",  "mtia",   "xpu",    "ipu",    "privateuseone", NULL};

/* The handle the loader allocates: the public part first, then what only the loader reads. */
typedef struct loader_handle {
  tb_vendor_handle public;
  pthread_mutex_t mutex; /* guards the init state */
  int init_state;        /* INIT_* */
  tb_status init_status; /* of the first tb_loader_init */
  char init_error[1024]; /* its message */
  pid_t init_pid;        /* the process that ran init */
  tb_context preset;     /* the context of a table without init (the 1.x adapter's) */
  tb1_adapter *adapter;  /* for a 1.x vendor */
} loader_handle;

enum { INIT_NOT_YET, INIT_DONE, INIT_FAILED, INIT_FINALIZED };

static loader_handle *private_of(tb_vendor_handle *handle) { return (loader_handle *)handle; }

#define GROUP_CHECK(table_field, type, min_size, label)                                       \
  do {                                                                                        \
    if (vendor->table_field == NULL) {                                                        \
      return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,                                  \
                  "vendor library '%s' (device type '%s'): the " label                        \
                  " group is missing (tb_vendor." #table_field " is NULL)",                   \
                  path, vendor->device_type);                                                 \
    }                                                                                         \
    if (vendor->table_field->struct_size < (min_size)) {                                      \
      return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,                                  \
                  "vendor library '%s' (device type '%s'): its " #type                        \
                  " is %zu bytes but ABI %u.0 requires at least %zu (struct_size too small: " \
                  "rebuild it against this vendor.h)",                                        \
                  path, vendor->device_type, vendor->table_field->struct_size,                \
                  TB_ABI_VERSION_MAJOR, (size_t)(min_size));                                  \
    }                                                                                         \
    memset(&handle->table_field, 0, sizeof handle->table_field);                              \
    memcpy(&handle->table_field, vendor->table_field,                                         \
           vendor->table_field->struct_size < sizeof(type) ? vendor->table_field->struct_size \
                                                           : sizeof(type));                   \
    handle->table_field.struct_size = sizeof(type);                                           \
  } while (0)

/* Validates the optional kernel table and copies it into @p handle. */
static tb_status validate_kernels(const tb_vendor *vendor, const char *path,
                                  tb_vendor_handle *handle, char *error, size_t error_size) {
  const tb_kernel_api *api = vendor->kernels;
  if (api->struct_size < TB_KERNEL_API_V2_0_SIZE) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s' (device type '%s'): its tb_kernel_api is %zu bytes but ABI "
                "2.0 requires at least %zu",
                path, vendor->device_type, api->struct_size, (size_t)TB_KERNEL_API_V2_0_SIZE);
  }
  if (api->count < 0 || (api->count > 0 && api->kernels == NULL)) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s' (device type '%s'): its kernel table has count %lld and "
                "kernels %p",
                path, vendor->device_type, (long long)api->count, (const void *)api->kernels);
  }
  for (int64_t i = 0; i < api->count; i++) {
    const tb_kernel *kernel = api->kernels[i];
    const char *problem = NULL;
    if (kernel == NULL) {
      problem = "is NULL";
    } else if (kernel->struct_size < TB_KERNEL_V2_0_SIZE) {
      problem = "has a struct_size smaller than ABI 2.0's tb_kernel";
    } else if (kernel->name == NULL || kernel->name[0] == '\0') {
      problem = "has no name";
    } else if (kernel->fn == NULL) {
      problem = "has no function";
    } else if (kernel->flags != 0) {
      problem = "sets flags this torch_backend does not know (tb_kernel::flags must be 0)";
    }
    if (problem != NULL) {
      return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                  "vendor library '%s' (device type '%s'): kernel %lld ('%s') %s", path,
                  vendor->device_type, (long long)i,
                  kernel != NULL && kernel->struct_size >= TB_STRUCT_SIZE(tb_kernel, name) &&
                          kernel->name != NULL
                      ? kernel->name
                      : "?",
                  problem);
    }
  }
  for (int64_t i = 1; i < api->count; i++) {
    for (int64_t j = 0; j < i; j++) {
      if (strcmp(api->kernels[j]->name, api->kernels[i]->name) == 0) {
        return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                    "vendor library '%s' (device type '%s'): kernel %lld ('%s') repeats an "
                    "earlier name",
                    path, vendor->device_type, (long long)i, api->kernels[i]->name);
      }
    }
  }
  handle->kernels.count = api->count;
  handle->kernels.kernels = api->kernels;
  return TB_OK;
}

/* Validates the 2.0 table @p vendor and fills @p handle; path is for messages, abi_major and
 * abi_minor the version the vendor implements (1.x for a table the adapter built). */
static tb_status validate(const tb_vendor *vendor, const char *path, uint32_t abi_major,
                          uint32_t abi_minor, tb_vendor_handle *handle, char *error,
                          size_t error_size) {
  if (vendor->struct_size < TB_VENDOR_V2_0_SIZE) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s': its tb_vendor table is %zu bytes but ABI %u.0 requires "
                "at least %zu (struct_size too small: rebuild it against this vendor.h)",
                path, vendor->struct_size, TB_ABI_VERSION_MAJOR, (size_t)TB_VENDOR_V2_0_SIZE);
  }
  if (vendor->device_type == NULL || !valid_identifier(vendor->device_type, 31)) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s': device type '%s' is not a valid device name (lowercase "
                "letters, digits and '_', starting with a letter, at most 31 characters)",
                path, vendor->device_type != NULL ? vendor->device_type : "(null)");
  }
  for (const char *const *reserved = k_reserved_types; *reserved != NULL; reserved++) {
    if (strcmp(vendor->device_type, *reserved) == 0) {
      return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                  "vendor library '%s': device type '%s' is already used by PyTorch; choose "
                  "another name",
                  path, vendor->device_type);
    }
  }
  GROUP_CHECK(device, tb_device_api, TB_DEVICE_API_V2_0_SIZE, "device");
  GROUP_CHECK(memory, tb_memory_api, TB_MEMORY_API_V2_0_SIZE, "memory");
  GROUP_CHECK(stream, tb_stream_api, TB_STREAM_API_V2_0_SIZE, "stream");
  GROUP_CHECK(event, tb_event_api, TB_EVENT_API_V2_0_SIZE, "event");

  memset(&handle->kernels, 0, sizeof handle->kernels);
  handle->kernels.struct_size = sizeof handle->kernels;
  if (vendor->kernels != NULL) {
    tb_status status = validate_kernels(vendor, path, handle, error, error_size);
    if (status != TB_OK) return status;
  }

  /* Every required slot of the lists (vendor_slots.h) that the vendor's minor has. */
  char missing[1024] = "";
  size_t missing_length = 0, missing_count = 0;
  if (vendor->last_error == NULL) {
    missing_length = append(missing, sizeof missing, missing_length, "last_error");
    missing_count++;
  }
#define REQUIRE(gt, gf, slot, required, since, ret, params, names)                       \
  if ((required) && vendor->abi_minor + 1 > (since) && handle->gf.slot == NULL) {        \
    missing_length = append(missing, sizeof missing, missing_length, "%s" #gf "." #slot, \
                            missing_length ? ", " : "");                                 \
    missing_count++;                                                                     \
  }
  TB_VENDOR_SLOTS(REQUIRE)
#undef REQUIRE
  if (handle->memory.host_malloc != NULL && handle->memory.host_free == NULL) {
    missing_length =
        append(missing, sizeof missing, missing_length,
               "%smemory.host_free (required with memory.host_malloc)", missing_length ? ", " : "");
    missing_count++;
  }
  if (missing_count > 0) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s' (device type '%s', ABI %u.%u) lacks %zu required "
                "function%s: %s",
                path, vendor->device_type, abi_major, abi_minor, missing_count,
                missing_count == 1 ? "" : "s", missing);
  }

  handle->table = vendor;
  handle->abi_major = abi_major;
  handle->abi_minor = abi_minor;
  handle->context = NULL;
  handle->init = vendor->init;
  handle->finalize = vendor->finalize;
  handle->last_error = vendor->last_error;
  copy_string(handle->device_type, sizeof handle->device_type, vendor->device_type);
  copy_string(handle->vendor_name, sizeof handle->vendor_name, vendor->vendor_name);
  copy_string(handle->vendor_version, sizeof handle->vendor_version, vendor->vendor_version);
  copy_string(handle->library_path, sizeof handle->library_path, path);
  return TB_OK;
}

/* Calls the entry point for major 2, then 1, and validates what it returns (wrapping a 1.x
 * table in the adapter). */
static tb_status open_with_entry(tb_vendor_get_fn entry, const char *path, loader_handle *handle,
                                 char *error, size_t error_size) {
  const char *reason = NULL;
  const tb_vendor *vendor = entry(TB_ABI_VERSION_MAJOR, &reason);
  const char *reason_v1 = NULL;
  const tb_vendor *table = vendor;
  if (vendor == NULL) {
    table = entry(1, &reason_v1);
    if (table == NULL) {
      return fail(error, error_size, TB_ERROR_UNAVAILABLE,
                  "vendor library '%s' returned no table for ABI major %u from %s (%s), nor for "
                  "major 1 (%s)",
                  path, TB_ABI_VERSION_MAJOR, TB_VENDOR_ENTRY_POINT,
                  reason != NULL && *reason ? reason : "the vendor gave no reason",
                  reason_v1 != NULL && *reason_v1 ? reason_v1 : "the vendor gave no reason");
    }
  }
  /* struct_size, abi_major and abi_minor sit at the same offsets in every major. */
  if (table->struct_size < TB_STRUCT_SIZE(tb_vendor, abi_minor)) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s': its tb_vendor table is %zu bytes, too small to hold even "
                "its ABI version",
                path, table->struct_size);
  }
  uint32_t major = table->abi_major, minor = table->abi_minor;
  if (major == 1) {
    /* A vendor built against a 1.x header (asked for major 1, or one that ignores the major
     * it is asked for): wrap it. */
    const tb_vendor *adapted = NULL;
    tb_status status =
        tb1_adapter_create((const tb1_vendor *)(const void *)table, path, &handle->adapter,
                           &adapted, &handle->preset, error, error_size);
    if (status != TB_OK) return status;
    table = adapted;
  } else if (major != TB_ABI_VERSION_MAJOR) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s' implements ABI %u.%u, but this torch_backend speaks ABI "
                "%u.%u and loads vendors of majors %u and 1: rebuild the vendor against a "
                "matching vendor.h",
                path, major, minor, TB_ABI_VERSION_MAJOR, TB_ABI_VERSION_MINOR,
                TB_ABI_VERSION_MAJOR);
  }
  return validate(table, path, major, minor, &handle->public, error, error_size);
}

static loader_handle *new_handle(void) {
  loader_handle *handle = calloc(1, sizeof *handle);
  if (handle != NULL) pthread_mutex_init(&handle->mutex, NULL);
  return handle;
}

static void free_handle(loader_handle *handle) {
  if (handle == NULL) return;
  tb1_adapter_destroy(handle->adapter);
  pthread_mutex_destroy(&handle->mutex);
  free(handle);
}

tb_status tb_loader_init(tb_vendor_handle *public, const tb_host_api *host, char *error,
                         size_t error_size) {
  if (public == NULL) {
    return fail(error, error_size, TB_ERROR_INVALID_ARGUMENT, "tb_loader_init: handle is NULL");
  }
  loader_handle *handle = private_of(public);
  pthread_mutex_lock(&handle->mutex);
  if (handle->init_state == INIT_NOT_YET) {
    tb_host_api mine = {sizeof(tb_host_api), TB_ABI_VERSION_MAJOR, TB_ABI_VERSION_MINOR, NULL};
    tb_context context = handle->preset;
    tb_status status = TB_OK;
    if (public->init != NULL) status = public->init(host != NULL ? host : &mine, &context);
    handle->init_status = status;
    handle->init_pid = getpid();
    if (status == TB_OK) {
      public->context = context;
      handle->init_state = INIT_DONE;
    } else {
      const char *message = public->last_error(NULL);
      snprintf(handle->init_error, sizeof handle->init_error, "%s: init failed with %s: %s",
               public->device_type, tb_status_name(status),
               message != NULL && *message ? message : "(the vendor gave no message)");
      handle->init_state = INIT_FAILED;
    }
  }
  tb_status status = handle->init_state == INIT_FAILED      ? handle->init_status
                     : handle->init_state == INIT_FINALIZED ? TB_ERROR_UNAVAILABLE
                                                            : TB_OK;
  if (handle->init_state == INIT_FAILED) {
    fail(error, error_size, status, "%s", handle->init_error);
  } else if (handle->init_state == INIT_FINALIZED) {
    fail(error, error_size, status, "%s: the vendor's context was finalized", public->device_type);
  }
  pthread_mutex_unlock(&handle->mutex);
  return status;
}

void tb_loader_finalize(tb_vendor_handle *public) {
  if (public == NULL) return;
  loader_handle *handle = private_of(public);
  pthread_mutex_lock(&handle->mutex);
  if (handle->init_state == INIT_DONE) {
    handle->init_state = INIT_FINALIZED;
    /* A child forked after init does not own the context: the parent does. */
    if (handle->init_pid == getpid() && public->finalize != NULL) {
      public->finalize(public->context);
    }
  }
  pthread_mutex_unlock(&handle->mutex);
}

tb_status tb_loader_open_entry(tb_vendor_get_fn entry, tb_vendor_handle **out, char *error,
                               size_t error_size) {
  if (entry == NULL || out == NULL) {
    return fail(error, error_size, TB_ERROR_INVALID_ARGUMENT,
                "tb_loader_open_entry: entry and out must not be NULL");
  }
  loader_handle *handle = new_handle();
  if (handle == NULL) {
    return fail(error, error_size, TB_ERROR_OUT_OF_MEMORY, "tb_loader: out of host memory");
  }
  Dl_info info;
  char path[PATH_MAX];
  const char *where = "(linked in)";
  void *entry_address = NULL; /* POSIX gives function and object pointers one size */
  _Static_assert(sizeof entry == sizeof entry_address, "a function pointer fits a void *");
  memcpy(&entry_address, &entry, sizeof entry_address);
  if (dladdr(entry_address, &info) != 0 && info.dli_fname != NULL) {
    where = realpath(info.dli_fname, path) != NULL ? path : info.dli_fname;
  }
  tb_status status = open_with_entry(entry, where, handle, error, error_size);
  if (status != TB_OK) {
    free_handle(handle);
    return status;
  }
  *out = &handle->public;
  return TB_OK;
}

tb_status tb_loader_open(const char *name_or_path, tb_vendor_handle **out, char *error,
                         size_t error_size) {
  if (name_or_path == NULL || out == NULL || *name_or_path == '\0') {
    return fail(error, error_size, TB_ERROR_INVALID_ARGUMENT,
                "tb_loader_open: name_or_path must be a vendor name or a library path and out "
                "must not be NULL");
  }
  char path[PATH_MAX];
  if (strchr(name_or_path, '/') != NULL) {
    copy_string(path, sizeof path, name_or_path);
  } else {
    if (!valid_identifier(name_or_path, 31)) {
      return fail(error, error_size, TB_ERROR_INVALID_ARGUMENT,
                  "'%s' is neither a bundled vendor name (lowercase letters, digits, '_') nor a "
                  "library path (which contains a '/')",
                  name_or_path);
    }
    find_context *find = calloc(1, sizeof *find);
    if (find == NULL) {
      return fail(error, error_size, TB_ERROR_OUT_OF_MEMORY, "tb_loader: out of host memory");
    }
    char file[128];
    snprintf(file, sizeof file, "%s%s%s", TB_LOADER_LIBRARY_PREFIX, name_or_path,
             TB_LOADER_LIBRARY_SUFFIX);
    find->file = file;
    int found = for_each_search_dir(find_file, find);
    if (!found) {
      char names[512];
      tb_loader_bundled_names(names, sizeof names);
      tb_status status =
          fail(error, error_size, TB_ERROR_UNAVAILABLE,
               "no bundled vendor named '%s': %s not found in %s (set %s to add directories); "
               "bundled vendors: %s",
               name_or_path, file, find->searched_length ? find->searched : "(no directory)",
               TB_LOADER_PATH_ENV, *names ? names : "(none)");
      free(find);
      return status;
    }
    copy_string(path, sizeof path, find->path);
    free(find);
  }

  char resolved[PATH_MAX];
  if (realpath(path, resolved) != NULL) copy_string(path, sizeof path, resolved);
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    const char *reason = dlerror();
    return fail(error, error_size, TB_ERROR_UNAVAILABLE, "cannot load vendor library '%s': %s",
                path, reason != NULL ? reason : "(dlopen gave no reason)");
  }
  /* dlsym returns an object pointer; converting it to a function pointer is what POSIX
   * specifies for dlsym, done through a union to stay within ISO C. */
  union {
    void *object;
    tb_vendor_get_fn function;
  } entry;
  dlerror();
  entry.object = dlsym(library, TB_VENDOR_ENTRY_POINT);
  if (entry.object == NULL) {
    dlclose(library);
    return fail(error, error_size, TB_ERROR_UNAVAILABLE,
                "vendor library '%s' does not export the entry point '%s' (is it a "
                "torch_backend vendor? declare it with TB_EXPORT, as in vendor.h)",
                path, TB_VENDOR_ENTRY_POINT);
  }
  loader_handle *handle = new_handle();
  if (handle == NULL) {
    dlclose(library);
    return fail(error, error_size, TB_ERROR_OUT_OF_MEMORY, "tb_loader: out of host memory");
  }
  tb_status status = open_with_entry(entry.function, path, handle, error, error_size);
  if (status != TB_OK) {
    free_handle(handle);
    dlclose(library);
    return status;
  }
  /* A loaded vendor is never unmapped: its worker threads may still be finishing work that a
   * destroyed stream left behind when tb_loader_close runs, and unmapping their code under
   * them crashes the process.  Pin it (RTLD_NODELETE) and drop the extra reference. */
  void *pinned = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
  if (pinned != NULL) dlclose(pinned);
  handle->public.dl_handle = library;
  *out = &handle->public;
  return TB_OK;
}

void tb_loader_close(tb_vendor_handle *handle) {
  if (handle == NULL) return;
  tb_loader_finalize(handle);
  void *library = handle->dl_handle;
  free_handle(private_of(handle));
  if (library != NULL) dlclose(library);
}

/* The extension of type `type` in the handle's chain, NULL when absent or when the chain is
 * broken (a cycle, the type twice: `error` says which). */
static const tb_extension_base *find_extension(const tb_vendor_handle *handle,
                                               tb_extension_type type, const char *type_name,
                                               char *error, size_t error_size) {
  (void)fail(error, error_size, TB_OK, "%s", "");
  if (handle == NULL || handle->table == NULL || handle->abi_major < 2) return NULL;
  const tb_extension_base *found = NULL;
  size_t links = 0;
  for (const tb_extension_base *e = handle->table->extensions; e != NULL; e = e->next) {
    if (++links > 1024) {
      (void)fail(error, error_size, TB_OK, "%s: its extension chain does not end (a cycle?)",
                 handle->device_type);
      return NULL;
    }
    if ((int)e->type != (int)type) continue; /* unknown types are skipped */
    if (found != NULL) {
      (void)fail(error, error_size, TB_OK, "%s: its extension chain holds %s twice",
                 handle->device_type, type_name);
      return NULL;
    }
    found = e;
  }
  return found;
}

/* A function an extension must have, and whether it does. */
typedef struct required_fn {
  const char *name;
  int present;
} required_fn;

/* Whether the extension `base` found is at least `size` bytes, the struct of ABI `abi`;
 * otherwise the message says so.  Checked before any member past the base is read. */
static int big_enough(const tb_vendor_handle *handle, const tb_extension_base *base,
                      const char *struct_name, const char *abi, size_t size, char *error,
                      size_t error_size) {
  if (base->struct_size >= size) return 1;
  (void)fail(error, error_size, TB_OK, "%s: its %s has struct_size %zu, smaller than ABI %s's %zu",
             handle->device_type, struct_name, base->struct_size, abi, size);
  return 0;
}

/* Whether every function of `required` is present; otherwise the message names the first
 * missing one. */
static int has_required(const tb_vendor_handle *handle, const char *struct_name,
                        const required_fn *required, size_t count, char *error, size_t error_size) {
  for (size_t i = 0; i < count; i++) {
    if (!required[i].present) {
      (void)fail(error, error_size, TB_OK, "%s: its %s lacks the required function %s",
                 handle->device_type, struct_name, required[i].name);
      return 0;
    }
  }
  return 1;
}

const tb_collectives_extension *tb_loader_collectives(const tb_vendor_handle *handle, char *error,
                                                      size_t error_size) {
  const tb_collectives_extension *found = (const tb_collectives_extension *)find_extension(
      handle, TB_EXTENSION_COLLECTIVES, "TB_EXTENSION_COLLECTIVES", error, error_size);
  if (found == NULL ||
      !big_enough(handle, &found->base, "tb_collectives_extension", "2.2",
                  TB_STRUCT_SIZE(tb_collectives_extension, reduce_scatter), error, error_size)) {
    return NULL;
  }
  const required_fn required[] = {
      {"get_unique_id", found->get_unique_id != NULL},  {"comm_init", found->comm_init != NULL},
      {"comm_destroy", found->comm_destroy != NULL},    {"all_reduce", found->all_reduce != NULL},
      {"broadcast", found->broadcast != NULL},          {"all_gather", found->all_gather != NULL},
      {"reduce_scatter", found->reduce_scatter != NULL}};
  return has_required(handle, "tb_collectives_extension", required,
                      sizeof required / sizeof required[0], error, error_size)
             ? found
             : NULL;
}

const tb_graphs_extension *tb_loader_graphs(const tb_vendor_handle *handle, char *error,
                                            size_t error_size) {
  const tb_graphs_extension *found = (const tb_graphs_extension *)find_extension(
      handle, TB_EXTENSION_GRAPHS, "TB_EXTENSION_GRAPHS", error, error_size);
  if (found == NULL ||
      !big_enough(handle, &found->base, "tb_graphs_extension", "2.3",
                  TB_STRUCT_SIZE(tb_graphs_extension, graph_destroy), error, error_size)) {
    return NULL;
  }
  const required_fn required[] = {{"capture_begin", found->capture_begin != NULL},
                                  {"capture_end", found->capture_end != NULL},
                                  {"graph_launch", found->graph_launch != NULL},
                                  {"graph_destroy", found->graph_destroy != NULL}};
  return has_required(handle, "tb_graphs_extension", required, sizeof required / sizeof required[0],
                      error, error_size)
             ? found
             : NULL;
}

const tb_storage_meta_extension *tb_loader_storage_meta(const tb_vendor_handle *handle, char *error,
                                                        size_t error_size) {
  const tb_storage_meta_extension *found = (const tb_storage_meta_extension *)find_extension(
      handle, TB_EXTENSION_STORAGE_META, "TB_EXTENSION_STORAGE_META", error, error_size);
  if (found == NULL ||
      !big_enough(handle, &found->base, "tb_storage_meta_extension", "2.4",
                  TB_STRUCT_SIZE(tb_storage_meta_extension, release), error, error_size)) {
    return NULL;
  }
  const required_fn required[] = {{"set", found->set != NULL},
                                  {"get", found->get != NULL},
                                  {"release", found->release != NULL}};
  return has_required(handle, "tb_storage_meta_extension", required,
                      sizeof required / sizeof required[0], error, error_size)
             ? found
             : NULL;
}

const tb_ipc_extension *tb_loader_ipc(const tb_vendor_handle *handle, char *error,
                                      size_t error_size) {
  const tb_ipc_extension *found = (const tb_ipc_extension *)find_extension(
      handle, TB_EXTENSION_IPC, "TB_EXTENSION_IPC", error, error_size);
  if (found == NULL ||
      !big_enough(handle, &found->base, "tb_ipc_extension", "2.5",
                  TB_STRUCT_SIZE(tb_ipc_extension, close_memory), error, error_size)) {
    return NULL;
  }
  const required_fn required[] = {{"export_memory", found->export_memory != NULL},
                                  {"import_memory", found->import_memory != NULL},
                                  {"close_memory", found->close_memory != NULL}};
  return has_required(handle, "tb_ipc_extension", required, sizeof required / sizeof required[0],
                      error, error_size)
             ? found
             : NULL;
}

const tb_programs_extension *tb_loader_programs(const tb_vendor_handle *handle, char *error,
                                                size_t error_size) {
  const tb_programs_extension *found = (const tb_programs_extension *)find_extension(
      handle, TB_EXTENSION_PROGRAMS, "TB_EXTENSION_PROGRAMS", error, error_size);
  if (found == NULL ||
      !big_enough(handle, &found->base, "tb_programs_extension", "2.6",
                  TB_STRUCT_SIZE(tb_programs_extension, release), error, error_size)) {
    return NULL;
  }
  const required_fn required[] = {{"build", found->build != NULL},
                                  {"get_kernel", found->get_kernel != NULL},
                                  {"launch", found->launch != NULL},
                                  {"release", found->release != NULL}};
  if (!has_required(handle, "tb_programs_extension", required, sizeof required / sizeof required[0],
                    error, error_size)) {
    return NULL;
  }
  if (found->languages == 0) {
    (void)fail(error, error_size, TB_OK, "%s: its tb_programs_extension declares no language",
               handle->device_type);
    return NULL;
  }
  return found;
}
