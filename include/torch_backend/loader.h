/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 */

/**
 * @file loader.h
 * @brief Finding, loading and validating a vendor library (C, no libtorch).
 *
 * The loader turns a vendor name ("fake", "emu"), a library path, or an entry point linked
 * into the program into a validated ::tb_vendor_handle.  It checks everything a caller would
 * otherwise have to: that the library exports ::tb_vendor_get, that it serves an ABI major
 * this torch_backend loads, that every struct is at least as large as the ABI requires, and
 * that every required function is present (the slots of vendor_slots.h).  On failure the
 * message names the library, the versions involved and each missing piece.
 *
 * The loader asks a library for ABI major 2 first and, when it gets no table, for major 1: a
 * vendor built against any ABI 1.x header loads unchanged.  Its table is wrapped in a 2.0 one
 * whose functions adapt each call (dropping the context, converting kernel calls and tensor
 * lists), so callers only ever see ABI 2.0; the handle's `abi_major`/`abi_minor` still report
 * what the vendor implements.
 *
 * The handle holds normalised copies of the vendor's groups: each copy is a full-size struct of
 * this build's ABI, with every field the vendor's older `struct_size` does not cover set to
 * NULL.  Callers can therefore test optional functions against NULL without size arithmetic.
 * Every call through them takes the handle's `context`, which tb_loader_init() creates (the
 * vendor's tb_vendor::init) and tb_loader_finalize() releases.
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
/** The vendor torch_backend loads when none is named (`TORCH_BACKEND_VENDOR` unset or empty,
 *  and no vendor package installed): the bundled emulated accelerator. */
#define TB_LOADER_DEFAULT_VENDOR "emu"
/** Environment variable naming extra directories (colon-separated) searched for bundled
 *  names before the loader's own directory. */
#define TB_LOADER_PATH_ENV "TORCH_BACKEND_VENDOR_PATH"

/** A loaded, validated vendor.  Created by tb_loader_open() or tb_loader_open_entry(), released
 *  by tb_loader_close().  Read-only for its users. */
typedef struct tb_vendor_handle {
  /** The ABI 2.0 table in use: the vendor's own, as its entry point returned it, or for a 1.x
   *  vendor the table the loader built around it. */
  const tb_vendor *table;
  /** ABI major the vendor implements (1 for a vendor loaded through the 1.x adapter). */
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
  /** The context to pass to every call: set by tb_loader_init() (the one tb_vendor::init
   *  created, NULL for a vendor without init, the adapter's for a 1.x vendor); NULL before. */
  tb_context context;
  /** tb_vendor::init (NULL when absent).  Call it through tb_loader_init(). */
  tb_status (*init)(const tb_host_api *host, tb_context *ctx);
  /** tb_vendor::finalize (NULL when absent).  Call it through tb_loader_finalize(). */
  void (*finalize)(tb_context ctx);
  /** tb_vendor::last_error. */
  const char *(*last_error)(tb_context ctx);
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

/**
 * Creates the vendor's context: calls tb_vendor::init once for @p handle and stores the context
 * in tb_vendor_handle::context.  Later calls return the first call's result without calling
 * init again, so every user of a handle can call it before its first vendor call.
 *
 * @param handle      The vendor.
 * @param host        What to tell the vendor (::tb_host_api); NULL: this build's ABI version
 *                    and no PyTorch version.
 * @param[out] error  Receives a NUL-terminated message on failure (may be NULL):
 *                    `"<device type>: init failed with <STATUS>: <vendor message>"`.
 * @param error_size  Size of @p error in bytes.
 * @return ::TB_OK, or the status init failed with.  Thread-safe: concurrent callers wait for
 *         the first one.  A child process forked after a successful init keeps the parent's
 *         context (see vendor.h, "The vendor context").
 */
tb_status tb_loader_init(tb_vendor_handle *handle, const tb_host_api *host, char *error,
                         size_t error_size);

/**
 * Releases the context tb_loader_init() created: calls tb_vendor::finalize once, unless init
 * never succeeded, finalize already ran, or this is a process forked after init (the context
 * belongs to the parent).  The caller makes no vendor call with the handle afterwards.
 */
void tb_loader_finalize(tb_vendor_handle *handle);

/** Releases @p handle, finalizing its context first (tb_loader_finalize()).  NULL is a no-op.
 *  The caller must have destroyed every stream, event and allocation first.  The vendor library of
 * a successful tb_loader_open() stays mapped until the process exits (it is opened with
 * `RTLD_NODELETE`): a vendor's worker threads may still be finishing work of destroyed streams, and
 * unmapping code that threads run crashes the process.  Libraries that fail validation are unloaded
 * at once. */
void tb_loader_close(tb_vendor_handle *handle);

/**
 * The vendor's collectives library (vendor.h, ::TB_EXTENSION_COLLECTIVES), validated.
 *
 * @param handle      The vendor.
 * @param[out] error  Receives a NUL-terminated message when the vendor has an extension that
 *                    cannot be used (`"<device type>: its tb_collectives_extension ..."`: too
 *                    small a `struct_size`, a required function NULL, the type twice in the
 *                    chain), and "" otherwise (may be NULL).
 * @param error_size  Size of @p error in bytes.
 * @return The extension, or NULL when the vendor has none or an unusable one.
 */
const tb_collectives_extension *tb_loader_collectives(const tb_vendor_handle *handle, char *error,
                                                      size_t error_size);

/**
 * The vendor's graph capture (vendor.h, ::TB_EXTENSION_GRAPHS), validated.
 *
 * @param handle      The vendor.
 * @param[out] error  Receives "" when the vendor simply has no such extension; otherwise why
 *                    the one it has cannot be used (`"<device type>: its tb_graphs_extension
 *                    ..."`: too small, a required function NULL, the type twice in the chain).
 * @param error_size  Size of @p error in bytes.
 * @return The extension, or NULL when the vendor has none or an unusable one.
 */
const tb_graphs_extension *tb_loader_graphs(const tb_vendor_handle *handle, char *error,
                                            size_t error_size);

/**
 * The vendor's per-storage metadata (vendor.h, ::TB_EXTENSION_STORAGE_META), validated.
 *
 * @param handle      The vendor.
 * @param[out] error  Receives "" when the vendor simply has no such extension; otherwise why
 *                    the one it has cannot be used (`"<device type>: its
 *                    tb_storage_meta_extension ..."`: too small, a required function NULL,
 *                    the type twice in the chain).
 * @param error_size  Size of @p error in bytes.
 * @return The extension, or NULL when the vendor has none or an unusable one.
 */
const tb_storage_meta_extension *tb_loader_storage_meta(const tb_vendor_handle *handle, char *error,
                                                        size_t error_size);

/**
 * The vendor's sharing of device memory between processes (vendor.h, ::TB_EXTENSION_IPC),
 * validated.
 *
 * @param handle      The vendor.
 * @param[out] error  Receives "" when the vendor simply has no such extension; otherwise why
 *                    the one it has cannot be used (`"<device type>: its tb_ipc_extension
 *                    ..."`: too small, a required function NULL, the type twice in the chain).
 * @param error_size  Size of @p error in bytes.
 * @return The extension, or NULL when the vendor has none or an unusable one.
 */
const tb_ipc_extension *tb_loader_ipc(const tb_vendor_handle *handle, char *error,
                                      size_t error_size);

/**
 * The vendor's device programs built at run time (vendor.h, ::TB_EXTENSION_PROGRAMS),
 * validated: every function present and tb_programs_extension::languages not 0.
 *
 * @param handle      The vendor.
 * @param[out] error  Receives "" when the vendor simply has no such extension; otherwise why
 *                    the one it has cannot be used (`"<device type>: its tb_programs_extension
 *                    ..."`: too small, a required function NULL, no language, the type twice).
 * @param error_size  Size of @p error in bytes.
 * @return The extension, or NULL when the vendor has none or an unusable one.
 */
const tb_programs_extension *tb_loader_programs(const tb_vendor_handle *handle, char *error,
                                                size_t error_size);

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
