/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 */

/**
 * @file loader.h
 * @brief Finding, loading and validating a vendor library (C, no libtorch).
 *
 * The loader turns a vendor name ("fake", "emu"), a library path, or an entry point linked
 * into the program into a validated ::tb_vendor_handle.  It checks everything a caller would
 * otherwise have to: that the library exports ::tb_vendor_get, that it serves the ABI major
 * this torch_backend speaks, that every struct is at least as large as the ABI requires, and
 * that every required function is present.  On failure the message names the library, the
 * versions involved and each missing piece.
 *
 * The handle holds normalised copies of the vendor's groups: each copy is a full-size struct of
 * this build's ABI, with every field the vendor's older `struct_size` does not cover set to
 * NULL.  Callers can therefore test optional functions against NULL without size arithmetic.
 *
 * This header is torch_backend's own API, versioned with the package, not part of the vendor
 * ABI.  All functions are thread-safe.
 */
#ifndef TORCH_BACKEND_LOADER_H_
#define TORCH_BACKEND_LOADER_H_

#include <torch_backend/vendor.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Prefix of a bundled vendor's file name: vendor "emu" lives in `libtb_vendor_emu.so`. */
#define TB_LOADER_LIBRARY_PREFIX "libtb_vendor_"
/** Suffix of a bundled vendor's file name. */
#define TB_LOADER_LIBRARY_SUFFIX ".so"
/** Environment variable naming extra directories (colon-separated) searched for bundled
 *  names before the loader's own directory. */
#define TB_LOADER_PATH_ENV "TORCH_BACKEND_VENDOR_PATH"

/** A loaded, validated vendor.  Created by tb_loader_open() or tb_loader_open_entry(), released
 *  by tb_loader_close().  Read-only for its users. */
typedef struct tb_vendor_handle {
  /** The vendor's own table, as returned by its entry point. */
  const tb_vendor *table;
  /** ABI version the vendor reports. */
  uint32_t abi_major;
  /** ABI minor the vendor was built against. */
  uint32_t abi_minor;
  /** tb_vendor::device_type, copied. */
  char device_type[32];
  /** tb_vendor::vendor_name, copied (truncated to 127 bytes). */
  char vendor_name[128];
  /** tb_vendor::vendor_version, copied (truncated to 63 bytes). */
  char vendor_version[64];
  /** Absolute path of the library that holds the entry point (the program itself for a
   *  linked-in vendor). */
  char library_path[4096];
  /** tb_vendor::last_error. */
  const char *(*last_error)(void);
  /** Normalised copy of tb_vendor::device. */
  tb_device_api device;
  /** Normalised copy of tb_vendor::memory. */
  tb_memory_api memory;
  /** Normalised copy of tb_vendor::stream. */
  tb_stream_api stream;
  /** Normalised copy of tb_vendor::event. */
  tb_event_api event;
  /** Normalised copy of tb_vendor::kernels; all zero (count 0) when the vendor has none. */
  tb_kernel_api kernels;
  /** `dlopen` handle, or NULL for a linked-in vendor. */
  void *dl_handle;
} tb_vendor_handle;

/**
 * Loads the vendor @p name_or_path and validates it.
 *
 * @param name_or_path  A bundled vendor name (letters, digits, '_'), looked up as
 *                      `libtb_vendor_<name>.so` in the directories of ::TB_LOADER_PATH_ENV and
 *                      then in the directory holding the loader library itself; or, when it
 *                      contains a '/', the path of any vendor library.
 * @param[out] out      Receives the handle on success; unchanged on failure.
 * @param[out] error    Receives a NUL-terminated message on failure (may be NULL).
 * @param error_size    Size of @p error in bytes.
 * @return ::TB_OK, ::TB_ERROR_INVALID_ARGUMENT (bad name, NULL argument),
 *         ::TB_ERROR_UNAVAILABLE (library not found, not loadable, or no entry point / NULL
 *         table), ::TB_ERROR_NOT_SUPPORTED (ABI mismatch, table too small, required function
 *         missing) or ::TB_ERROR_OUT_OF_MEMORY.
 */
tb_status tb_loader_open(const char *name_or_path, tb_vendor_handle **out, char *error,
                         size_t error_size);

/**
 * Validates a vendor whose entry point is linked into the program (no `dlopen`).
 *
 * @param entry          The vendor's entry point, usually `&tb_vendor_get`.
 * @param[out] out      Receives the handle on success; unchanged on failure.
 * @param[out] error    Receives a NUL-terminated message on failure (may be NULL).
 * @param error_size    Size of @p error in bytes.
 * @return As tb_loader_open(), without the library-loading failures.
 */
tb_status tb_loader_open_entry(tb_vendor_get_fn entry, tb_vendor_handle **out, char *error,
                               size_t error_size);

/** Releases @p handle.  NULL is a no-op.  The caller must have destroyed every stream, event
 *  and allocation first.  The vendor library of a successful tb_loader_open() stays mapped
 *  until the process exits (it is opened with `RTLD_NODELETE`): a vendor's worker threads may
 *  still be finishing work of destroyed streams, and unmapping code that threads run crashes
 *  the process.  Libraries that fail validation are unloaded at once. */
void tb_loader_close(tb_vendor_handle *handle);

/**
 * Writes the directory that holds the loader library (where bundled vendors are installed)
 * into @p dir.  Returns ::TB_OK, or ::TB_ERROR_INTERNAL when it cannot be determined.
 */
tb_status tb_loader_bundled_dir(char *dir, size_t dir_size);

/**
 * Writes the names of the bundled vendors found in the search directories, separated by
 * ", " and sorted, into @p names (empty when none).  Returns ::TB_OK.
 */
tb_status tb_loader_bundled_names(char *names, size_t names_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORCH_BACKEND_LOADER_H_ */
