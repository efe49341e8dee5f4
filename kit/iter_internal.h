/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * What iter.c (the iterator) shares with reduce.c (reductions and rows): argument checks and
 * their messages.  Hidden, like the whole kit.
 */
#ifndef TORCH_BACKEND_KIT_ITER_INTERNAL_H_
#define TORCH_BACKEND_KIT_ITER_INTERNAL_H_

#include <stddef.h>
#include <torch_backend/vendor_kit_kernels.h>

/* Formats a message into msg (when not NULL) and returns status. */
tb_status tbk_msg_fail(char *msg, size_t msg_size, tb_status status, const char *format, ...);

/* t's sizes as "[2, 3]" into buf. */
void tbk_format_sizes(char *buf, size_t size, const tb_tensor *t);

/* TB_OK, or why t (called name in the message) is no tensor an iterator can walk. */
tb_status tbk_check_tensor(const tb_tensor *t, const char *name, char *msg, size_t msg_size);

#endif /* TORCH_BACKEND_KIT_ITER_INTERNAL_H_ */
