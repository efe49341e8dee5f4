/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * Helpers the bundled vendors share, compiled into each (not installed, not part of the ABI).
 */
#ifndef TORCH_BACKEND_BACKENDS_COMMON_SIZE_H_
#define TORCH_BACKEND_BACKENDS_COMMON_SIZE_H_

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* Parses a byte count: "123", "64K", "512M", "16G", "1T" (binary units, either case).
 * Returns 0 and sets *out on success; -1 for anything else, including overflow. */
static inline int tb_parse_size(const char *text, uint64_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0 || end == text) return -1;
  unsigned shift = 0;
  switch (*end) {
    case 'K':
    case 'k':
      shift = 10;
      end++;
      break;
    case 'M':
    case 'm':
      shift = 20;
      end++;
      break;
    case 'G':
    case 'g':
      shift = 30;
      end++;
      break;
    case 'T':
    case 't':
      shift = 40;
      end++;
      break;
    default:
      break;
  }
  if (*end != '\0' || (shift && value > (UINT64_MAX >> shift))) return -1;
  *out = (uint64_t)value << shift;
  return 0;
}

#endif /* TORCH_BACKEND_BACKENDS_COMMON_SIZE_H_ */
