/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 */

/**
 * @file conformance.h
 * @brief The conformance suite: every documented behaviour of vendor.h as a runnable check.
 *
 * The checks are written once, in C, against the ABI, and run against any vendor: by the
 * googletest contract suite (test/contract/, one test per check, through CTest) and by the
 * `tb-conformance` command-line tool, which prints a table of results per group.  A vendor
 * runs `tb-conformance path/to/libvendor.so` after each step of a port.
 *
 * A check creates what it needs, releases everything before it returns (pass or fail), and
 * leaves the vendor as it found it, so checks can run one after another in one process.
 */
#ifndef TORCH_BACKEND_CONFORMANCE_H_
#define TORCH_BACKEND_CONFORMANCE_H_

#include <torch_backend/loader.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The result of one check. */
typedef enum tb_check_outcome {
  /** The vendor keeps the documented behaviour. */
  TB_CHECK_PASS = 0,
  /** The vendor breaks it; the message says how. */
  TB_CHECK_FAIL = 1,
  /** The check does not apply (an optional function is absent, too few devices); the message
   *  says why. */
  TB_CHECK_SKIP = 2
} tb_check_outcome;

/** What a check works with: the vendor under test and room for its message. */
typedef struct tb_check_context {
  /** The vendor under test, its context created (tb_loader_init()): a check passes
   *  `vendor->context` to every call.  Its slots are counting wrappers around the vendor's
   *  (see tb_conformance_run()), which pass every argument, the context included, through. */
  const tb_vendor_handle *vendor;
  /** Why the check failed or was skipped; empty on a pass. */
  char message[2048];
} tb_check_context;

/** One documented behaviour. */
typedef struct tb_check {
  /** Group: "context", "device", "memory", "stream", "event", "threads", "fault",
   *  "kernels", "collectives", "graphs", "storage_meta" or "ipc". */
  const char *group;
  /** Name, unique within its group, such as "invalid_index". */
  const char *name;
  /** The behaviour the check asserts, in one sentence. */
  const char *summary;
  /** Runs the check. */
  tb_check_outcome (*run)(tb_check_context *context);
} tb_check;

/** Every check, in a stable order (grouped); @p count receives how many. */
const tb_check *tb_conformance_checks(size_t *count);

/** One function slot of the ABI, from vendor_slots.h's lists: what `tb-conformance --slots`
 *  prints and the ABI reference's slot table shows. */
typedef struct tb_slot_info {
  /** "device", "memory", "stream", "event", or "vendor" for tb_vendor's own members. */
  const char *group;
  /** The member name, such as "device_malloc". */
  const char *name;
  /** Whether the loader refuses a table without it. */
  int required;
  /** The minor of the current major that added it. */
  int since_minor;
  /** The return type, as written in vendor.h. */
  const char *return_type;
  /** The parameter list, parenthesised, as written in vendor.h. */
  const char *params;
} tb_slot_info;

/** Every slot, groups first in table order, then tb_vendor's own (init, finalize,
 *  last_error); @p count receives how many. */
const tb_slot_info *tb_conformance_slots(size_t *count);

/** Whether @p vendor provides slot @p index of tb_conformance_slots() (optional slots may be
 *  NULL). */
int tb_conformance_slot_present(const tb_vendor_handle *vendor, size_t index);

/**
 * Runs @p check against @p vendor and copies its message into @p message.
 *
 * Creates the vendor's context first (tb_loader_init(); a failure fails the check with the
 * init message).  When @p slot_calls is not NULL (an array of as many counters as
 * tb_conformance_slots() has entries), the check runs on a copy of the handle whose slots count
 * their calls into it before forwarding them: the coverage `tb-conformance` prints.  Runs of
 * counted checks are serialised.
 */
tb_check_outcome tb_conformance_run(const tb_check *check, tb_vendor_handle *vendor, char *message,
                                    size_t message_size, uint64_t *slot_calls);

/** "pass", "FAIL" or "skip". */
const char *tb_check_outcome_name(tb_check_outcome outcome);

/**
 * Loads the operator schemas of the torch release the vendor targets, for the "kernels"
 * group's comparison (ABI 2.0, vendor.h "Schemas"): a text file with one schema per line as
 * PyTorch prints them, lines starting with '#' being comments (the first names the source in
 * messages), which `python -m torch_backend.schemas` writes.  Without it, that check is
 * skipped.  Call before running checks, from one thread.
 *
 * @param path          The file.
 * @param[out] error    Receives a message on failure (may be NULL).
 * @param error_size    Size of @p error.
 * @return ::TB_OK, or ::TB_ERROR_INVALID_ARGUMENT when the file cannot be read or holds no
 *         schema.
 */
tb_status tb_conformance_load_schemas(const char *path, char *error, size_t error_size);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TORCH_BACKEND_CONFORMANCE_H_ */
