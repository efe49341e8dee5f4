/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * tb-conformance: runs the conformance suite against any vendor library and prints a table of
 * checks per group, then which slots of the ABI the checks called, which the vendor leaves
 * absent, and which were never called.  Each check runs in its own child process (unless
 * --no-fork), so a vendor that crashes or hangs in one check is reported as failing that check,
 * not as a dead tool; the parent never initialises the vendor.  --slots lists the ABI's slots
 * (vendor_slots.h) without loading anything.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <torch_backend/conformance.h>
#include <unistd.h>

#ifndef TORCH_BACKEND_VERSION
#define TORCH_BACKEND_VERSION "0.0.0"
#endif

enum { EXIT_CHECKS_FAILED = 1, EXIT_NOT_LOADED = 2, EXIT_USAGE = 64 };

/* Slots of the ABI (tb_conformance_slots()); checked against the real count at start. */
enum { MAX_SLOTS = 64 };

typedef struct options {
  const char *vendor;
  const char *filters[32];
  int filter_count;
  int fork_checks;
  unsigned timeout;
  const char *json_path;
  const char *schemas_path;
  int list;
  int slots;
} options;

typedef struct result {
  tb_check_outcome outcome;
  char message[2048];
  uint64_t calls[MAX_SLOTS]; /* per slot, during the check */
} result;

static void usage(FILE *to) {
  fprintf(to,
          "usage: tb-conformance [options] VENDOR\n"
          "\n"
          "Runs the torch_backend conformance suite against VENDOR: a bundled vendor name\n"
          "(fake, emu, ...), an installed vendor package's name (its entry point in the\n"
          "torch_backend.vendors group, resolved by the tb-conformance command) or the path\n"
          "of any vendor library, and prints one line per check.\n"
          "\n"
          "options:\n"
          "  --filter PATTERN   run only checks whose 'group.name' starts with PATTERN\n"
          "                     (repeatable), e.g. --filter memory --filter event.elapsed\n"
          "  --timeout SECONDS  fail a check that runs longer (default 120; 0 = none)\n"
          "  --no-fork          run checks in this process (a crash ends the run)\n"
          "  --json FILE        also write the results as JSON to FILE\n"
          "  --schemas FILE     compare the kernels' schemas with this torch release's list,\n"
          "                     written by: python -m torch_backend.schemas > FILE\n"
          "  --list             list the checks and exit\n"
          "  --slots            list the ABI's function slots (with --json FILE: as JSON) and\n"
          "                     exit\n"
          "  --help             show this help\n"
          "\n"
          "exit status: 0 all checks pass or skip, 1 a check failed, 2 the vendor did not load\n"
          "or its init failed,\n"
          "64 bad usage\n");
}

static int parse(int argc, char **argv, options *opts) {
  memset(opts, 0, sizeof *opts);
  opts->fork_checks = 1;
  opts->timeout = 120;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      usage(stdout);
      exit(0);
    } else if (strcmp(arg, "--no-fork") == 0) {
      opts->fork_checks = 0;
    } else if (strcmp(arg, "--list") == 0) {
      opts->list = 1;
    } else if (strcmp(arg, "--slots") == 0) {
      opts->slots = 1;
    } else if (strcmp(arg, "--filter") == 0 && i + 1 < argc) {
      if (opts->filter_count == 32) return -1;
      opts->filters[opts->filter_count++] = argv[++i];
    } else if (strcmp(arg, "--timeout") == 0 && i + 1 < argc) {
      char *end = NULL;
      long value = strtol(argv[++i], &end, 10);
      if (*end != '\0' || value < 0) return -1;
      opts->timeout = (unsigned)value;
    } else if (strcmp(arg, "--json") == 0 && i + 1 < argc) {
      opts->json_path = argv[++i];
    } else if (strcmp(arg, "--schemas") == 0 && i + 1 < argc) {
      opts->schemas_path = argv[++i];
    } else if (arg[0] == '-') {
      fprintf(stderr, "tb-conformance: unknown or incomplete option '%s'\n", arg);
      return -1;
    } else if (opts->vendor == NULL) {
      opts->vendor = arg;
    } else {
      fprintf(stderr, "tb-conformance: more than one vendor given ('%s', '%s')\n", opts->vendor,
              arg);
      return -1;
    }
  }
  return (opts->vendor != NULL || opts->list || opts->slots) ? 0 : -1;
}

static int selected(const options *opts, const tb_check *check) {
  if (opts->filter_count == 0) return 1;
  char id[128];
  snprintf(id, sizeof id, "%s.%s", check->group, check->name);
  for (int i = 0; i < opts->filter_count; i++) {
    if (strncmp(id, opts->filters[i], strlen(opts->filters[i])) == 0) return 1;
  }
  return 0;
}

/* Runs one check in a child process; crashes and timeouts become failures. */
static void run_forked(const tb_check *check, tb_vendor_handle *vendor, unsigned timeout,
                       result *out) {
  int fds[2];
  memset(out, 0, sizeof *out);
  out->outcome = TB_CHECK_FAIL;
  fflush(stdout);
  fflush(stderr);
  if (pipe(fds) != 0) {
    snprintf(out->message, sizeof out->message, "pipe() failed: %s", strerror(errno));
    return;
  }
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(out->message, sizeof out->message, "fork() failed: %s", strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return;
  }
  if (pid == 0) {
    close(fds[0]);
    if (timeout > 0) alarm(timeout);
    result child;
    memset(&child, 0, sizeof child);
    child.outcome =
        tb_conformance_run(check, vendor, child.message, sizeof child.message, child.calls);
    ssize_t written = write(fds[1], &child, sizeof child);
    _exit(written == (ssize_t)sizeof child ? 0 : 3);
  }
  close(fds[1]);
  result child;
  size_t got = 0;
  while (got < sizeof child) {
    ssize_t n = read(fds[0], (char *)&child + got, sizeof child - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got == sizeof child && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    *out = child;
  } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
    snprintf(out->message, sizeof out->message, "timed out after %u s (a call blocked forever?)",
             timeout);
  } else if (WIFSIGNALED(status)) {
    snprintf(out->message, sizeof out->message, "crashed with signal %d (%s)", WTERMSIG(status),
             strsignal(WTERMSIG(status)));
  } else {
    snprintf(out->message, sizeof out->message, "check process exited with status %d",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
}

/* What the first contact with the vendor found: init's result and the device count. */
typedef struct probe {
  tb_status init_status;
  char init_error[1024];
  int32_t count; /* -1 when device.count failed */
} probe;

static void run_probe(tb_vendor_handle *vendor, probe *out) {
  memset(out, 0, sizeof *out);
  out->count = -1;
  out->init_status = tb_loader_init(vendor, NULL, out->init_error, sizeof out->init_error);
  if (out->init_status == TB_OK && vendor->device.count(vendor->context, &out->count) != TB_OK) {
    out->count = -1;
  }
}

/* init and the device count, asked in a child so the parent never initialises the vendor
 * before forking. */
static void first_contact(tb_vendor_handle *vendor, int fork_checks, probe *out) {
  if (!fork_checks) {
    run_probe(vendor, out);
    return;
  }
  memset(out, 0, sizeof *out);
  out->count = -1;
  int fds[2];
  if (pipe(fds) != 0) return;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    probe found;
    run_probe(vendor, &found);
    ssize_t written = write(fds[1], &found, sizeof found);
    _exit(written == (ssize_t)sizeof found ? 0 : 3);
  }
  close(fds[1]);
  size_t got = 0;
  while (pid > 0 && got < sizeof *out) {
    ssize_t n = read(fds[0], (char *)out + got, sizeof *out - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += (size_t)n;
  }
  if (got != sizeof *out) {
    memset(out, 0, sizeof *out);
    out->count = -1;
  }
  close(fds[0]);
  if (pid > 0) waitpid(pid, NULL, 0);
}

static void json_string(FILE *to, const char *text) {
  fputc('"', to);
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    if (*c == '"' || *c == '\\') {
      fprintf(to, "\\%c", *c);
    } else if (*c < 0x20) {
      fprintf(to, "\\u%04x", *c);
    } else {
      fputc(*c, to);
    }
  }
  fputc('"', to);
}

/* --slots: every slot of the ABI, as a table or (--json FILE) as JSON. */
static int list_slots(const options *opts) {
  size_t count = 0;
  const tb_slot_info *slots = tb_conformance_slots(&count);
  FILE *json = NULL;
  if (opts->json_path != NULL && (json = fopen(opts->json_path, "w")) == NULL) {
    fprintf(stderr, "tb-conformance: cannot write %s: %s\n", opts->json_path, strerror(errno));
    return EXIT_CHECKS_FAILED;
  }
  if (json == NULL) printf("%-28s %-9s %-6s %-34s %s\n", "slot", "kind", "since", "fake's", "type");
  for (size_t i = 0; i < count; i++) {
    const tb_slot_info *s = &slots[i];
    char id[64], fake_name[64], since[16];
    snprintf(id, sizeof id, "%s.%s", s->group, s->name);
    if (strcmp(s->group, "vendor") == 0) {
      snprintf(fake_name, sizeof fake_name, "tbv_%s", s->name);
    } else {
      snprintf(fake_name, sizeof fake_name, "tbv_%s_%s", s->group, s->name);
    }
    snprintf(since, sizeof since, "%d.%d", TB_ABI_VERSION_MAJOR, s->since_minor);
    if (json == NULL) {
      printf("%-28s %-9s %-6s %-34s %s %s\n", id, s->required ? "required" : "optional", since,
             fake_name, s->return_type, s->params);
      continue;
    }
    fprintf(json, "%s\n  {\"group\": ", i ? "," : "[");
    json_string(json, s->group);
    fprintf(json, ", \"name\": ");
    json_string(json, s->name);
    fprintf(json,
            ", \"required\": %s, \"since\": \"%s\", \"fake\": ", s->required ? "true" : "false",
            since);
    json_string(json, fake_name);
    fprintf(json, ", \"return_type\": ");
    json_string(json, s->return_type);
    fprintf(json, ", \"params\": ");
    json_string(json, s->params);
    fputc('}', json);
  }
  if (json != NULL) {
    fprintf(json, "\n]\n");
    fclose(json);
  }
  return 0;
}

/* Which slots the checks called, which the vendor leaves absent, which it has but no check
 * called. */
static void print_coverage(const tb_vendor_handle *vendor, const uint64_t *calls) {
  size_t count = 0;
  const tb_slot_info *slots = tb_conformance_slots(&count);
  size_t exercised = 0, absent = 0, missed = 0;
  printf("\n%-28s  %-8s  %s\n", "slot", "kind", "calls");
  for (size_t i = 0; i < count; i++) {
    char id[64];
    snprintf(id, sizeof id, "%s.%s", slots[i].group, slots[i].name);
    const char *kind = slots[i].required ? "required" : "optional";
    if (!tb_conformance_slot_present(vendor, i)) {
      printf("%-28s  %-8s  absent\n", id, kind);
      absent++;
    } else if (calls[i] == 0) {
      printf("%-28s  %-8s  never called\n", id, kind);
      missed++;
    } else {
      printf("%-28s  %-8s  %llu\n", id, kind, (unsigned long long)calls[i]);
      exercised++;
    }
  }
  printf("\nslots: %zu exercised, %zu absent, %zu never called\n", exercised, absent, missed);
}

int main(int argc, char **argv) {
  options opts;
  if (parse(argc, argv, &opts) != 0) {
    usage(stderr);
    return EXIT_USAGE;
  }
  size_t slot_count = 0;
  tb_conformance_slots(&slot_count);
  if (slot_count > MAX_SLOTS) {
    fprintf(stderr, "tb-conformance: the ABI has %zu slots, more than MAX_SLOTS (%d)\n", slot_count,
            MAX_SLOTS);
    return EXIT_USAGE;
  }
  if (opts.slots) return list_slots(&opts);
  size_t total = 0;
  const tb_check *checks = tb_conformance_checks(&total);
  if (opts.list) {
    for (size_t i = 0; i < total; i++) {
      if (selected(&opts, &checks[i])) {
        printf("%-11s %-24s %s\n", checks[i].group, checks[i].name, checks[i].summary);
      }
    }
    return 0;
  }

  char error[4096];
  if (opts.schemas_path != NULL &&
      tb_conformance_load_schemas(opts.schemas_path, error, sizeof error) != TB_OK) {
    fprintf(stderr, "tb-conformance: %s\n", error);
    return EXIT_USAGE;
  }
  tb_vendor_handle *vendor = NULL;
  if (tb_loader_open(opts.vendor, &vendor, error, sizeof error) != TB_OK) {
    fprintf(stderr, "tb-conformance: %s\n", error);
    return EXIT_NOT_LOADED;
  }
  probe first;
  first_contact(vendor, opts.fork_checks, &first);
  if (first.init_status != TB_OK) {
    fprintf(stderr, "tb-conformance: vendor library '%s': %s\n", vendor->library_path,
            first.init_error);
    tb_loader_close(vendor);
    return EXIT_NOT_LOADED;
  }
  int32_t devices = first.count;
  char device_text[64];
  if (devices < 0) {
    snprintf(device_text, sizeof device_text, "device count unknown (device.count failed)");
  } else {
    snprintf(device_text, sizeof device_text, "%d device%s", (int)devices, devices == 1 ? "" : "s");
  }
  printf("tb-conformance %s: vendor '%s' (%s %s), ABI %u.%u, %s\n", TORCH_BACKEND_VERSION,
         vendor->device_type, vendor->vendor_name, vendor->vendor_version, vendor->abi_major,
         vendor->abi_minor, device_text);
  printf("library: %s\n\n", vendor->library_path);
  printf("%-11s  %-24s  %-6s  %s\n", "group", "check", "result", "detail");
  printf("%-11s  %-24s  %-6s  %s\n", "-----------", "------------------------", "------", "------");

  result *results = calloc(total, sizeof *results);
  if (results == NULL) {
    fprintf(stderr, "tb-conformance: out of memory\n");
    tb_loader_close(vendor);
    return EXIT_NOT_LOADED;
  }
  size_t passed = 0, failed = 0, skipped = 0;
  for (size_t i = 0; i < total; i++) {
    const tb_check *check = &checks[i];
    if (!selected(&opts, check)) continue;
    result *r = &results[i];
    if (opts.fork_checks) {
      run_forked(check, vendor, opts.timeout, r);
    } else {
      r->outcome = tb_conformance_run(check, vendor, r->message, sizeof r->message, r->calls);
    }
    passed += r->outcome == TB_CHECK_PASS;
    failed += r->outcome == TB_CHECK_FAIL;
    skipped += r->outcome == TB_CHECK_SKIP;
    printf("%-11s  %-24s  %-6s  %s\n", check->group, check->name, tb_check_outcome_name(r->outcome),
           r->message);
    fflush(stdout);
  }

  printf("\n%-11s  %4s  %4s  %4s\n", "group", "pass", "fail", "skip");
  for (size_t i = 0; i < total;) {
    size_t j = i, counts[3] = {0, 0, 0};
    for (; j < total && strcmp(checks[j].group, checks[i].group) == 0; j++) {
      if (selected(&opts, &checks[j])) counts[results[j].outcome]++;
    }
    if (counts[0] + counts[1] + counts[2] > 0) {
      printf("%-11s  %4zu  %4zu  %4zu\n", checks[i].group, counts[TB_CHECK_PASS],
             counts[TB_CHECK_FAIL], counts[TB_CHECK_SKIP]);
    }
    i = j;
  }
  uint64_t calls[MAX_SLOTS] = {0};
  for (size_t i = 0; i < total; i++) {
    for (size_t k = 0; k < slot_count; k++) calls[k] += results[i].calls[k];
  }
  print_coverage(vendor, calls);
  printf("\nresult: %zu passed, %zu failed, %zu skipped\n", passed, failed, skipped);
  if (vendor->kernels.count > 0) {
    /* The kernels group checks the table and the schemas; the numbers need PyTorch. */
    printf(
        "\nkernels: %lld published; these checks cover the table and its schemas, not the\n"
        "numbers: python -m torch_backend.check_kernels %s\n",
        (long long)vendor->kernels.count, vendor->library_path);
  }

  if (opts.json_path != NULL) {
    FILE *json = fopen(opts.json_path, "w");
    if (json == NULL) {
      fprintf(stderr, "tb-conformance: cannot write %s: %s\n", opts.json_path, strerror(errno));
      failed++;
    } else {
      fprintf(json, "{\"vendor\": ");
      json_string(json, vendor->device_type);
      fprintf(json, ", \"library\": ");
      json_string(json, vendor->library_path);
      fprintf(json, ", \"abi\": \"%u.%u\", \"devices\": %d, \"checks\": [", vendor->abi_major,
              vendor->abi_minor, (int)devices);
      int first = 1;
      for (size_t i = 0; i < total; i++) {
        if (!selected(&opts, &checks[i])) continue;
        fprintf(json,
                "%s\n  {\"group\": \"%s\", \"name\": \"%s\", \"result\": \"%s\", \"detail\": ",
                first ? "" : ",", checks[i].group, checks[i].name,
                results[i].outcome == TB_CHECK_PASS   ? "pass"
                : results[i].outcome == TB_CHECK_SKIP ? "skip"
                                                      : "fail");
        json_string(json, results[i].message);
        fputc('}', json);
        first = 0;
      }
      /* The coverage table: per slot, present or not and how often the checks called it. */
      const tb_slot_info *slots = tb_conformance_slots(NULL);
      fprintf(json, "\n], \"slots\": [");
      for (size_t k = 0; k < slot_count; k++) {
        fprintf(json,
                "%s\n  {\"slot\": \"%s.%s\", \"required\": %s, \"present\": %s, "
                "\"calls\": %llu}",
                k ? "," : "", slots[k].group, slots[k].name, slots[k].required ? "true" : "false",
                tb_conformance_slot_present(vendor, k) ? "true" : "false",
                (unsigned long long)calls[k]);
      }
      fprintf(json, "\n]}\n");
      fclose(json);
    }
  }
  free(results);
  tb_loader_close(vendor);
  return failed > 0 ? EXIT_CHECKS_FAILED : 0;
}
