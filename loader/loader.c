/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * The vendor loader: resolve a name or path, dlopen, call the entry point, validate the table
 * against this build's ABI, and hand out a normalised copy of it.  No global mutable state.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <torch_backend/loader.h>
#include <unistd.h>

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
  if (dladdr((void *)&tb_loader_bundled_dir, &info) == 0 || info.dli_fname == NULL) {
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

#define GROUP_CHECK(table_field, type, min_size, label)                                           \
  do {                                                                                            \
    if (vendor->table_field == NULL) {                                                            \
      return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,                                      \
                  "vendor library '%s' (device type '%s'): the " label                            \
                  " group is missing (tb_vendor." #table_field " is NULL)",                       \
                  path, vendor->device_type);                                                     \
    }                                                                                             \
    if (vendor->table_field->struct_size < (min_size)) {                                          \
      return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,                                      \
                  "vendor library '%s' (device type '%s'): its " #type                            \
                  " is %zu bytes but ABI major %u requires at least %zu (struct_size too small: " \
                  "rebuild it against this vendor.h)",                                            \
                  path, vendor->device_type, vendor->table_field->struct_size,                    \
                  TB_ABI_VERSION_MAJOR, (size_t)(min_size));                                      \
    }                                                                                             \
    memset(&handle->table_field, 0, sizeof handle->table_field);                                  \
    memcpy(&handle->table_field, vendor->table_field,                                             \
           vendor->table_field->struct_size < sizeof(type) ? vendor->table_field->struct_size     \
                                                           : sizeof(type));                       \
    handle->table_field.struct_size = sizeof(type);                                               \
  } while (0)

#define REQUIRE_FN(group, fn)                                                               \
  do {                                                                                      \
    if (handle->group.fn == NULL) {                                                         \
      missing_length = append(missing, sizeof missing, missing_length, "%s" #group "." #fn, \
                              missing_length ? ", " : "");                                  \
      missing_count++;                                                                      \
    }                                                                                       \
  } while (0)

/* Validates the optional kernel table (ABI 1.1) and copies it into @p handle. */
static tb_status validate_kernels(const tb_vendor *vendor, const char *path,
                                  tb_vendor_handle *handle, char *error, size_t error_size) {
  const tb_kernel_api *api = vendor->kernels;
  if (api->struct_size < TB_KERNEL_API_V1_1_SIZE) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s' (device type '%s'): its tb_kernel_api is %zu bytes but ABI "
                "1.1 requires at least %zu",
                path, vendor->device_type, api->struct_size, (size_t)TB_KERNEL_API_V1_1_SIZE);
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
    } else if (kernel->struct_size < TB_KERNEL_V1_1_SIZE) {
      problem = "has a struct_size smaller than ABI 1.1's tb_kernel";
    } else if (kernel->name == NULL || kernel->name[0] == '\0') {
      problem = "has no name";
    } else if (kernel->fn == NULL) {
      problem = "has no function";
    } else if (kernel->flags != 0) {
      problem = "sets flags this torch_backend does not know (tb_kernel::flags must be 0)";
    }
    for (int64_t j = 0; problem == NULL && j < i; j++) {
      if (strcmp(api->kernels[j]->name, kernel->name) == 0) problem = "repeats an earlier name";
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
  handle->kernels.count = api->count;
  handle->kernels.kernels = api->kernels;
  return TB_OK;
}

/* Validates @p vendor and fills @p handle; path is for messages. */
static tb_status validate(const tb_vendor *vendor, const char *path, tb_vendor_handle *handle,
                          char *error, size_t error_size) {
  /* struct_size, abi_major and abi_minor sit at the same offsets in every major. */
  if (vendor->struct_size >= TB_STRUCT_SIZE(tb_vendor, abi_minor) &&
      vendor->abi_major != TB_ABI_VERSION_MAJOR) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s' implements ABI %u.%u, but this torch_backend requires ABI "
                "major %u (it speaks %u.%u): rebuild the vendor against a matching vendor.h",
                path, vendor->abi_major, vendor->abi_minor, TB_ABI_VERSION_MAJOR,
                TB_ABI_VERSION_MAJOR, TB_ABI_VERSION_MINOR);
  }
  if (vendor->struct_size < TB_VENDOR_V1_0_SIZE) {
    return fail(error, error_size, TB_ERROR_NOT_SUPPORTED,
                "vendor library '%s': its tb_vendor table is %zu bytes but ABI major %u requires "
                "at least %zu (struct_size too small: rebuild it against this vendor.h)",
                path, vendor->struct_size, TB_ABI_VERSION_MAJOR, (size_t)TB_VENDOR_V1_0_SIZE);
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
  GROUP_CHECK(device, tb_device_api, TB_DEVICE_API_V1_0_SIZE, "device");
  GROUP_CHECK(memory, tb_memory_api, TB_MEMORY_API_V1_0_SIZE, "memory");
  GROUP_CHECK(stream, tb_stream_api, TB_STREAM_API_V1_0_SIZE, "stream");
  GROUP_CHECK(event, tb_event_api, TB_EVENT_API_V1_0_SIZE, "event");

  memset(&handle->kernels, 0, sizeof handle->kernels);
  handle->kernels.struct_size = sizeof handle->kernels;
  if (TB_STRUCT_HAS_FIELD(vendor, tb_vendor, kernels) && vendor->kernels != NULL) {
    tb_status status = validate_kernels(vendor, path, handle, error, error_size);
    if (status != TB_OK) return status;
  }

  char missing[1024] = "";
  size_t missing_length = 0, missing_count = 0;
  if (vendor->last_error == NULL) {
    missing_length = append(missing, sizeof missing, missing_length, "last_error");
    missing_count++;
  }
  REQUIRE_FN(device, count);
  REQUIRE_FN(device, get_properties);
  REQUIRE_FN(device, synchronize);
  REQUIRE_FN(memory, device_malloc);
  REQUIRE_FN(memory, device_free);
  REQUIRE_FN(memory, copy_h2d);
  REQUIRE_FN(memory, copy_d2h);
  REQUIRE_FN(memory, copy_d2d);
  REQUIRE_FN(memory, copy_h2d_async);
  REQUIRE_FN(memory, copy_d2h_async);
  REQUIRE_FN(memory, copy_d2d_async);
  REQUIRE_FN(memory, memset_async);
  REQUIRE_FN(stream, create);
  REQUIRE_FN(stream, destroy);
  REQUIRE_FN(stream, query);
  REQUIRE_FN(stream, synchronize);
  REQUIRE_FN(stream, wait_event);
  REQUIRE_FN(event, create);
  REQUIRE_FN(event, destroy);
  REQUIRE_FN(event, record);
  REQUIRE_FN(event, query);
  REQUIRE_FN(event, synchronize);
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
                path, vendor->device_type, vendor->abi_major, vendor->abi_minor, missing_count,
                missing_count == 1 ? "" : "s", missing);
  }

  handle->table = vendor;
  handle->abi_major = vendor->abi_major;
  handle->abi_minor = vendor->abi_minor;
  handle->last_error = vendor->last_error;
  copy_string(handle->device_type, sizeof handle->device_type, vendor->device_type);
  copy_string(handle->vendor_name, sizeof handle->vendor_name, vendor->vendor_name);
  copy_string(handle->vendor_version, sizeof handle->vendor_version, vendor->vendor_version);
  copy_string(handle->library_path, sizeof handle->library_path, path);
  return TB_OK;
}

/* Calls the entry point and validates what it returns. */
static tb_status open_with_entry(tb_vendor_get_fn entry, const char *path, tb_vendor_handle *handle,
                                 char *error, size_t error_size) {
  const char *reason = NULL;
  const tb_vendor *vendor = entry(TB_ABI_VERSION_MAJOR, &reason);
  if (vendor == NULL) {
    return fail(error, error_size, TB_ERROR_UNAVAILABLE,
                "vendor library '%s' returned no table for ABI major %u from %s: %s", path,
                TB_ABI_VERSION_MAJOR, TB_VENDOR_ENTRY_POINT,
                reason != NULL && *reason ? reason : "(the vendor gave no reason)");
  }
  return validate(vendor, path, handle, error, error_size);
}

tb_status tb_loader_open_entry(tb_vendor_get_fn entry, tb_vendor_handle **out, char *error,
                               size_t error_size) {
  if (entry == NULL || out == NULL) {
    return fail(error, error_size, TB_ERROR_INVALID_ARGUMENT,
                "tb_loader_open_entry: entry and out must not be NULL");
  }
  tb_vendor_handle *handle = calloc(1, sizeof *handle);
  if (handle == NULL) {
    return fail(error, error_size, TB_ERROR_OUT_OF_MEMORY, "tb_loader: out of host memory");
  }
  Dl_info info;
  char path[PATH_MAX];
  const char *where = "(linked in)";
  if (dladdr((void *)entry, &info) != 0 && info.dli_fname != NULL) {
    where = realpath(info.dli_fname, path) != NULL ? path : info.dli_fname;
  }
  tb_status status = open_with_entry(entry, where, handle, error, error_size);
  if (status != TB_OK) {
    free(handle);
    return status;
  }
  *out = handle;
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
  tb_vendor_handle *handle = calloc(1, sizeof *handle);
  if (handle == NULL) {
    dlclose(library);
    return fail(error, error_size, TB_ERROR_OUT_OF_MEMORY, "tb_loader: out of host memory");
  }
  tb_status status = open_with_entry(entry.function, path, handle, error, error_size);
  if (status != TB_OK) {
    free(handle);
    dlclose(library);
    return status;
  }
  /* A loaded vendor is never unmapped: its worker threads may still be finishing work that a
   * destroyed stream left behind when tb_loader_close runs, and unmapping their code under
   * them crashes the process.  Pin it (RTLD_NODELETE) and drop the extra reference. */
  void *pinned = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD | RTLD_NODELETE);
  if (pinned != NULL) dlclose(pinned);
  handle->dl_handle = library;
  *out = handle;
  return TB_OK;
}

void tb_loader_close(tb_vendor_handle *handle) {
  if (handle == NULL) return;
  if (handle->dl_handle != NULL) dlclose(handle->dl_handle);
  free(handle);
}
