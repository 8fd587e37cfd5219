/* qreplay: folders and output files. */
#ifndef QREPLAY_FS_H
#define QREPLAY_FS_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* mkdir -p: dir and its missing parents. Returns 0, or QR_EIO with "FOLDER: cannot create
 * folder: reason" (or "FOLDER: not a folder") in errbuf. */
int qr_make_dirs(const char *dir, char *errbuf);

/* The same, and `created` (of `size` bytes) says the topmost folder this call made ("" when dir
 * existed), for qr_unmake_dirs to take back on failure. */
int qr_make_dirs_noted(const char *dir, char *created, size_t size, char *errbuf);

/* Take back what qr_make_dirs_noted made: remove dir and each parent up to `created`, each only
 * if it is empty (nothing anyone put there is removed). Nothing happens when created is "". */
void qr_unmake_dirs(const char *dir, const char *created);

/* Files and folders being written under a temporary name ("NAME.partial-PID"), for a program that
 * must leave nothing behind when it is stopped from outside its own loops: every writer adds its
 * temporary path when it creates it and marks it done when it renames or removes it;
 * qr_partial_discard_all removes every path still open (a file, or a folder with all in it).
 * Safe to call from any thread. */
void qr_partial_add(const char *path);
void qr_partial_done(const char *path);
void qr_partial_discard_all(void);

/* Whether writing `output` would overwrite one of inputs[0..n) (the same file, also through
 * another path, a symbolic or a hard link). Returns 0 (no clash, or output does not exist yet) or
 * QR_ESAMEFILE with "OUTPUT is INPUT: refusing to write over an input" in errbuf. */
int qr_check_output(const char *output, const char *const *inputs, size_t n, char *errbuf);

/* Whether replacing folder `dir` whole (removing it and putting another in its place) would take
 * one of inputs[0..n) with it: an input inside dir, through any path or link. Returns 0 (none,
 * or dir does not exist) or QR_ESAMEFILE with "INPUT is inside DIR, which is replaced: move it
 * out first" in errbuf. */
int qr_check_outside(const char *dir, const char *const *inputs, size_t n, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
