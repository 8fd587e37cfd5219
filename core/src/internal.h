/* Private helpers shared by the sources of libqreplay (prefix qri_). Not installed. */
#ifndef QREPLAY_INTERNAL_H
#define QREPLAY_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>

#include "qreplay/error.h"

/* Format a detail message into errbuf (if not NULL) and return code. */
int qri_err(char *errbuf, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefix the message already in errbuf with "prefix: " (if errbuf is not NULL). */
void qri_err_prefix(char *errbuf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copy a string into a fixed buffer, always NUL-terminated; returns 0 or QR_EVALUE if cut. */
int qri_strlcpy(char *dst, const char *src, size_t size);

#endif
