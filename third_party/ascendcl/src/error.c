/*
 * Copyright (c) 2026, the torch_backend authors. BSD-3-Clause, see LICENSE.
 *
 * aclGetRecentErrMsg (aclGetRecentErrMsg.md): each thread keeps the messages of its failed
 * calls, newest first; aclGetRecentErrMsg returns them and clears them, and its pointer stays
 * valid until the thread's next aclGetRecentErrMsg.  With no message it returns NULL, as the
 * page says it does when it cannot get one.  (aclInit's err_msg_mode=1, process-wide messages,
 * is not implemented: the stand-in keeps them per thread, the documented default.)
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <string.h>

#include "runtime.h"

#define SD_MESSAGES_SIZE 4096

static _Thread_local char t_messages[SD_MESSAGES_SIZE];
static _Thread_local size_t t_length;
static _Thread_local char t_returned[SD_MESSAGES_SIZE];

/* Puts the `length` bytes of `message` on top of the thread's list; the oldest text falls off
 * the end when the list is full. */
static void push(const char *message, size_t length) {
  if (length > SD_MESSAGES_SIZE - 2) length = SD_MESSAGES_SIZE - 2;
  size_t keep = 0; /* bytes of the older messages kept, after a '\n' */
  if (t_length != 0) {
    keep = t_length;
    if (length + 1 + keep > SD_MESSAGES_SIZE - 1) keep = SD_MESSAGES_SIZE - 1 - length - 1;
  }
  if (keep != 0) {
    memmove(t_messages + length + 1, t_messages, keep);
    t_messages[length] = '\n';
    t_length = length + 1 + keep;
  } else {
    t_length = length;
  }
  memcpy(t_messages, message, length);
  t_messages[t_length] = '\0';
}

void standin_set_verror(const char *format, va_list args) {
  char message[1024];
  vsnprintf(message, sizeof message, format, args);
  push(message, strnlen(message, sizeof message));
}

void standin_set_error(const char *format, ...) {
  va_list args;
  va_start(args, format);
  standin_set_verror(format, args);
  va_end(args);
}

aclError sd_error(aclError code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  standin_set_verror(format, args);
  va_end(args);
  return code;
}

const char *aclGetRecentErrMsg(void) {
  if (t_length == 0) return NULL;
  memcpy(t_returned, t_messages, t_length + 1);
  t_length = 0;
  t_messages[0] = '\0';
  return t_returned;
}
