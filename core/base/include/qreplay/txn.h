/* qreplay: outputs as transactions. A command never changes its output in place: it builds the
 * whole new output beside the old one and, once it is complete and on disk, swaps it in with one
 * rename (a file) or one exchange of two folders (renameat2 RENAME_EXCHANGE); only then is the
 * old one removed. Whatever stops the command (a signal, a full disk, kill -9, a power loss), the
 * output's name holds the old output whole or the new one whole.
 *
 * A run folder is one output: a command that writes into it works on a stage, a copy of the
 * folder made of hard links (files are shared, not copied), changes the stage (writers always
 * create new files and rename them, never write into a shared one), and commits it by exchanging
 * the two folders. The lock file is carried over by its link, so the lock still holds. What a
 * killed command left beside or inside the folder ("NAME.partial-PID", "NAME.old-PID") is
 * recognised and left out of the next stage, and counted. */
#ifndef QREPLAY_TXN_H
#define QREPLAY_TXN_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { QR_OUT_FILE = 0, QR_OUT_DIR = 1 };

/* Whether `path` may be written as an output of the given kind: it does not exist, or it is a
 * regular file (QR_OUT_FILE) or a folder (QR_OUT_DIR) and not a symbolic link. A device, FIFO or
 * socket is refused (writing "over" /dev/null as root would replace it), as is a symbolic link
 * (an output is never written through one) and the other kind. Returns 0 or QR_EIO with
 * "PATH: reason" in errbuf. */
int qr_output_check(const char *path, int kind, char *errbuf);

/* Whether `name` (the last component of a path) is a temporary of a qreplay command:
 * "X.partial-PID", "X.partial-PID.EXT", "X.old-PID" (PID digits). */
int qr_is_leftover_name(const char *name);

/* Remove what killed commands left beside `path` while writing it ("PATH.partial-PID",
 * "PATH.old-PID" of processes that are gone): every writer of a file calls it before it starts.
 * Returns how many were removed. */
size_t qr_leftovers_remove(const char *path);

/* Put the complete file or folder `staged` in place of `path` at once: fsync staged (every file
 * and folder in it), then rename it onto path (absent or a regular file) or exchange it with the
 * folder at path and remove the old one, and fsync the parent folder. A folder is never renamed
 * over one that appeared meanwhile (QR_ESTATE). path is checked with
 * qr_output_check first. On an error nothing at path changed and staged is left to the caller.
 * Returns 0 or QR_EIO naming path. */
int qr_commit_path(const char *staged, const char *path, char *errbuf);

/* Write a text file whole or not at all: `write` fills a temporary file beside path (registered
 * with qr_partial_add), which replaces path only if every write and the close succeeded. Returns
 * 0 or QR_EIO naming path. */
int qr_write_text_file(const char *path, void (*write)(FILE *, const void *), const void *ctx,
                       char *errbuf);

/* The lock of folder `dir` (which exists): an advisory flock on DIR/.qreplay-lock, opened without
 * following a link (a link, or anything but a regular file, there is refused), held until *fd is
 * closed or the process ends. The file notes the holder's process id. Returns 0 (*fd set),
 * QR_ESTATE with "DIR is in use by another qreplay command (process N): wait for it to finish",
 * or QR_EIO naming the lock file. */
int qr_folder_lock(const char *dir, int *fd, char *errbuf);

/* A stage for folder `dir`. */
typedef struct qr_stage qr_stage;

/* Begin a stage for `dir` (absent, or a folder: see qr_output_check): the folder "DIR.partial-PID"
 * beside it, holding a hard-link copy of dir (folders made, files linked, symbolic links copied as
 * links), leaving out the leftovers of killed commands (qr_is_leftover_name) in it, which are
 * counted (qr_stage_leftovers). Leftovers beside dir ("DIR.partial-N", "DIR.old-N") of processes
 * that are gone are removed. When dir does not exist yet, the stage starts empty and the caller
 * locks the stage itself (its lock file becomes dir's); the commit then never replaces a folder
 * another command made meanwhile (QR_ESTATE). A FIFO, socket or device in dir, or
 * a folder of another filesystem mounted inside it, cannot be carried over and is refused, naming
 * it. Caller owns *out (qr_stage_commit or qr_stage_abort). Returns 0, QR_ENOMEM or QR_EIO. */
int qr_stage_begin(qr_stage **out, const char *dir, char *errbuf);
/* The stage's folder, where the command writes. */
const char *qr_stage_path(const qr_stage *s);
/* How many leftovers of killed commands the stage leaves out, and the first one's path. */
size_t qr_stage_leftovers(const qr_stage *s, const char **first);
/* Swap the stage in (qr_commit_path) and free it. If the process's working folder was inside dir,
 * it moves to the new one. On an error dir is untouched and the stage removed. Returns 0 or
 * QR_EIO. */
int qr_stage_commit(qr_stage *s, char *errbuf);
/* Remove the stage and free it; dir is untouched. NULL is allowed. */
void qr_stage_abort(qr_stage *s);

#ifdef __cplusplus
}
#endif
#endif
