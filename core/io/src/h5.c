/* HDF5 result writer: the only file of libqreplay that talks to HDF5. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hdf5.h>
#include <zlib.h>

#include "h5_tuning.h"
#include "internal.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/txn.h"

struct qr_h5 {
    hid_t file;
    char path[1024];
    char partial[1100];
    int open_tables;
    struct qr_h5_table *tables; /* open tables, released by abort */
    int workers;                /* its tables' filtering threads (qri_h5_tuning) */
};

/* Tables are chunked, shuffled and deflated (level DEFLATE). Full chunks are filtered by our own
 * code, as HDF5's shuffle and deflate filters would (rows packed to the file type, bytes shuffled
 * by the packed row size, zlib's compress2), on worker threads while the caller fills the next
 * chunks, and written in order with H5Dwrite_chunk by the caller's thread: HDF5 itself is only
 * ever called from one thread. Readers decode them through HDF5's ordinary filter pipeline. */
enum { DEFLATE = 1 };

/* A chunk being filtered: its rows in, the filtered bytes out. */
struct chunk_job {
    unsigned char *rows;   /* chunk_rows x row_size, the caller's layout */
    unsigned char *packed; /* chunk_rows x file_size packed, then as much shuffled */
    unsigned char *out;    /* compressBound(chunk_rows x file_size) */
    uLongf out_len;
    uint64_t first_row; /* the chunk's offset in rows */
    int err;            /* zlib's failure */
    int filtered;       /* under the table's mu: ready to write */
};
/* Chunks in a table's ring: the one being filled and those with the worker or waiting to be
 * written (the callers append thousands of rows at once: several chunks). */
enum { NJOBS = 8 };
/* Threads filtering a table's chunks: the file's tuning (h5_tuning.h), at most MAX_WORKERS. */
enum { MAX_WORKERS = 4 };
static void free_layout(struct qr_h5_table *t);
static int job_alloc(struct qr_h5_table *t, struct chunk_job *j);

struct qr_h5_table {
    qr_h5 *f;
    hid_t dset;
    hid_t mem_type;
    size_t row_size;
    size_t chunk_rows;
    unsigned char *buf; /* the chunk being filled: jobs[fill].rows */
    size_t buffered;
    uint64_t rows;
    char path[256];
    struct qr_h5_table *next;
    /* the packed file layout: field i at file_off[i], mem_off[i], size[i] bytes */
    size_t n_fields, file_size;
    size_t *file_off, *mem_off, *size;
    int packed_rows; /* the caller's layout is the packed one: no copy */
    int rle;         /* deflate with run-length matches only (qr_h5_table_rle) */
    /* chunk k (in the order filled) is jobs[k % NJOBS]; chunks below `written` are in the file,
     * below `claimed` taken by a worker, below `submitted` handed over; chunk `submitted` is being
     * filled */
    struct chunk_job jobs[NJOBS];
    uint64_t submitted, written, claimed; /* claimed: under mu */
    int worker;                           /* the worker threads run: how many */
    int stop;                             /* under mu: the workers should exit */
    pthread_t thread[MAX_WORKERS];
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

/* Run an HDF5 call with its automatic error printing off: the library never prints. */
#define QUIET(expr)                                                                                \
    ({                                                                                             \
        __typeof__(expr) quiet_result_;                                                            \
        H5E_BEGIN_TRY                                                                              \
        {                                                                                          \
            quiet_result_ = (expr);                                                                \
        }                                                                                          \
        H5E_END_TRY;                                                                               \
        quiet_result_;                                                                             \
    })

/* Every file qreplay writes starts with a user block of QR_H5_USERBLOCK bytes that HDF5 skips
 * (h5py and h5dump read the file as usual): a line "QREPLAY-H5 1 sha256=HEX size=N\n" padded with
 * zeros, where HEX is the SHA-256 of every byte after the block and N the file's size. A reader
 * verifies it before libhdf5 sees a byte, so a damaged file is refused, never parsed. */
enum { USERBLOCK = 512 };
static const char SUM_TAG[] = "QREPLAY-H5 1 sha256=";

/* Files of ours open now (written or read). */
static int files_open;

/* At exit: close the library only when none of our files is open. A file HDF5 failed to close (a
 * full disk) makes its own exit handler print "infinite loop closing library" and a line of its
 * internals; such a file was removed already, so then the library is left as it is. */
static void h5_exit(void)
{
    if (files_open == 0)
        H5close();
}

/* Once per process: HDF5 never prints (its error stack is off: every failure becomes our message)
 * and its exit handler is ours (h5_exit). */
static void h5_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    H5dont_atexit();
    H5open();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    atexit(h5_exit);
}

/* What a failed write or create says: the system's reason when errno names one, else a guess. */
static const char *why(int e)
{
    switch (e) {
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
    case EIO:
    case EROFS:
    case EACCES:
    case ENOENT:
    case ENOTDIR: return strerror(e);
    default: return "a write failed (disk full?)";
    }
}

int qr_h5_create(qr_h5 **out, const char *path, char *errbuf)
{
    return qri_h5_create_tuned(out, path, QRI_H5_TUNING_DEFAULT, errbuf);
}

int qri_h5_create_tuned(qr_h5 **out, const char *path, qri_h5_tuning tuning, char *errbuf)
{
    if (!out || !path)
        return qri_err(errbuf, QR_EINVAL, "h5: NULL argument");
    int orc = qr_output_check(path, QR_OUT_FILE, errbuf);
    if (orc)
        return orc;
    qr_leftovers_remove(path);
    h5_init();
    qr_h5 *f = calloc(1, sizeof *f);
    if (!f)
        return QR_ENOMEM;
    snprintf(f->path, sizeof f->path, "%s", path);
    snprintf(f->partial, sizeof f->partial, "%s.partial-%ld", path, (long)getpid());
    f->workers = tuning.workers < 1             ? 1
                 : tuning.workers > MAX_WORKERS ? MAX_WORKERS
                                                : tuning.workers;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), fcpl = H5Pcreate(H5P_FILE_CREATE);
    H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG);
    /* the 1.8 format or later: checksums on the superblock and every object header */
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST);
    H5Pset_userblock(fcpl, USERBLOCK);
    /* create it ourselves first, with a first block of zeros, so that a folder that is missing,
     * not writable or full is said as such (HDF5 only says it failed) */
    int fd = open(f->partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd >= 0)
        qr_partial_add(f->partial);
    int e = fd < 0 ? errno : 0;
    static const char zeros[4096];
    if (fd >= 0 && write(fd, zeros, sizeof zeros) != (ssize_t)sizeof zeros)
        e = errno ? errno : ENOSPC;
    if (fd >= 0 && close(fd) != 0 && !e)
        e = errno;
    errno = 0;
    f->file = e ? -1 : QUIET(H5Fcreate(f->partial, H5F_ACC_TRUNC, fcpl, fapl));
    if (!e && f->file < 0)
        e = errno;
    QUIET(H5Pclose(fapl));
    QUIET(H5Pclose(fcpl));
    if (f->file < 0) {
        if (fd >= 0)
            unlink(f->partial);
        int rc = qri_err(errbuf, QR_EIO, "%s: cannot create: %s", f->partial, why(e));
        free(f);
        return rc;
    }
    files_open++;
    *out = f;
    return QR_OK;
}

const char *qr_h5_partial_path(const qr_h5 *f)
{
    return f->partial;
}

int qr_h5_group(qr_h5 *f, const char *path, char *errbuf)
{
    if (!f || !path || path[0] != '/')
        return qri_err(errbuf, QR_EINVAL, "h5: group path must start with /");
    char buf[512];
    if (qri_strlcpy(buf, path, sizeof buf))
        return qri_err(errbuf, QR_EINVAL, "h5: path too long");
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (buf[1] && QUIET(H5Lexists(f->file, buf, H5P_DEFAULT)) <= 0) {
                hid_t g = QUIET(H5Gcreate2(f->file, buf, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
                if (g < 0)
                    return qri_err(errbuf, QR_EHDF5, "%s: cannot create group %s", f->partial, buf);
                QUIET(H5Gclose(g));
            }
            *p = c;
            if (c == '\0')
                break;
        }
    }
    return QR_OK;
}

/* Open obj, (re)create attribute name of type/space, write value. */
static int write_attr(qr_h5 *f, const char *obj, const char *name, hid_t type, const void *value,
                      char *errbuf)
{
    if (!f || !obj || !name)
        return qri_err(errbuf, QR_EINVAL, "h5: NULL argument");
    hid_t o = QUIET(H5Oopen(f->file, obj, H5P_DEFAULT));
    if (o < 0)
        return qri_err(errbuf, QR_EHDF5, "%s: no object %s for attribute %s", f->partial, obj,
                       name);
    if (QUIET(H5Aexists(o, name)) > 0)
        H5Adelete(o, name);
    hid_t space = H5Screate(H5S_SCALAR);
    errno = 0;
    hid_t a = QUIET(H5Acreate2(o, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
    herr_t w = a >= 0 ? QUIET(H5Awrite(a, type, value)) : -1;
    if (a >= 0)
        QUIET(H5Aclose(a));
    QUIET(H5Sclose(space));
    H5Oclose(o);
    if (w < 0)
        return qri_err(errbuf, QR_EHDF5, "%s: cannot write attribute %s of %s: %s", f->path, name,
                       obj, why(errno));
    return QR_OK;
}

int qr_h5_attr_str(qr_h5 *f, const char *obj, const char *name, const char *value, char *errbuf)
{
    /* fixed length (no variable-length string: its global-heap reference is what a damaged file
     * crashes libhdf5 with) */
    const char *v = value ? value : "";
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(v) + 1);
    H5Tset_strpad(t, H5T_STR_NULLTERM);
    H5Tset_cset(t, H5T_CSET_UTF8);
    int rc = write_attr(f, obj, name, t, v, errbuf);
    QUIET(H5Tclose(t));
    return rc;
}

int qr_h5_attr_i64(qr_h5 *f, const char *obj, const char *name, int64_t value, char *errbuf)
{
    return write_attr(f, obj, name, H5T_NATIVE_INT64, &value, errbuf);
}

int qr_h5_attr_u64(qr_h5 *f, const char *obj, const char *name, uint64_t value, char *errbuf)
{
    return write_attr(f, obj, name, H5T_NATIVE_UINT64, &value, errbuf);
}

int qr_h5_attr_f64(qr_h5 *f, const char *obj, const char *name, double value, char *errbuf)
{
    return write_attr(f, obj, name, H5T_NATIVE_DOUBLE, &value, errbuf);
}

static hid_t field_type(const qr_h5_field *fd)
{
    switch (fd->type) {
    case QR_H5_U8: return H5Tcopy(H5T_NATIVE_UINT8);
    case QR_H5_U16: return H5Tcopy(H5T_NATIVE_UINT16);
    case QR_H5_U32: return H5Tcopy(H5T_NATIVE_UINT32);
    case QR_H5_U64: return H5Tcopy(H5T_NATIVE_UINT64);
    case QR_H5_I32: return H5Tcopy(H5T_NATIVE_INT32);
    case QR_H5_I64: return H5Tcopy(H5T_NATIVE_INT64);
    case QR_H5_F64: return H5Tcopy(H5T_NATIVE_DOUBLE);
    case QR_H5_STR: {
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, fd->size);
        H5Tset_strpad(t, H5T_STR_NULLTERM);
        return t;
    }
    }
    return -1;
}

int qr_h5_table_create(qr_h5_table **out, qr_h5 *f, const char *path, const qr_h5_field *fields,
                       size_t n_fields, size_t row_size, size_t chunk_rows, char *errbuf)
{
    if (!out || !f || !path || !fields || n_fields == 0 || row_size == 0)
        return qri_err(errbuf, QR_EINVAL, "h5: bad table arguments");
    /* parent groups */
    char parent[512];
    if (qri_strlcpy(parent, path, sizeof parent) || path[0] != '/')
        return qri_err(errbuf, QR_EINVAL, "h5: bad table path %s", path);
    char *slash = strrchr(parent, '/');
    if (slash != parent) {
        *slash = '\0';
        int rc = qr_h5_group(f, parent, errbuf);
        if (rc)
            return rc;
    }
    qr_h5_table *t = calloc(1, sizeof *t);
    if (!t)
        return QR_ENOMEM;
    t->f = f;
    t->row_size = row_size;
    t->chunk_rows = chunk_rows ? chunk_rows : (size_t)(65536 / row_size + 1);
    snprintf(t->path, sizeof t->path, "%s", path);
    t->mem_type = H5Tcreate(H5T_COMPOUND, row_size);
    int bad = t->mem_type < 0;
    for (size_t i = 0; !bad && i < n_fields; i++) {
        hid_t ft = field_type(&fields[i]);
        bad = ft < 0 || H5Tinsert(t->mem_type, fields[i].name, fields[i].offset, ft) < 0;
        if (ft >= 0)
            QUIET(H5Tclose(ft));
    }
    hid_t file_type = bad ? -1 : H5Tcopy(t->mem_type);
    if (file_type >= 0)
        H5Tpack(file_type);
    t->n_fields = n_fields;
    t->file_off = calloc(n_fields, sizeof *t->file_off);
    t->mem_off = calloc(n_fields, sizeof *t->mem_off);
    t->size = calloc(n_fields, sizeof *t->size);
    bad = bad || file_type < 0 || !t->file_off || !t->mem_off || !t->size;
    for (size_t i = 0; !bad && i < n_fields; i++) {
        int idx = H5Tget_member_index(file_type, fields[i].name);
        hid_t mt = idx < 0 ? -1 : H5Tget_member_type(file_type, (unsigned)idx);
        bad = mt < 0;
        if (!bad) {
            t->file_off[i] = H5Tget_member_offset(file_type, (unsigned)idx);
            t->mem_off[i] = fields[i].offset;
            t->size[i] = H5Tget_size(mt);
            QUIET(H5Tclose(mt));
        }
    }
    t->file_size = bad ? 0 : H5Tget_size(file_type);
    /* the caller's rows are the file's when every field sits where packing puts it */
    t->packed_rows = !bad && t->file_size == row_size;
    for (size_t i = 0; t->packed_rows && i < n_fields; i++)
        t->packed_rows = t->file_off[i] == t->mem_off[i];
    bad = bad || job_alloc(t, &t->jobs[0]);
    t->buf = t->jobs[0].rows;
    if (bad && file_type >= 0) {
        QUIET(H5Tclose(file_type));
        file_type = -1;
    }
    hsize_t dims[1] = {0}, maxdims[1] = {H5S_UNLIMITED}, chunk[1] = {t->chunk_rows};
    hid_t space = H5Screate_simple(1, dims, maxdims);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 1, chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, DEFLATE);
    t->dset =
        file_type < 0
            ? -1
            : QUIET(H5Dcreate2(f->file, path, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT));
    QUIET(H5Pclose(dcpl));
    QUIET(H5Sclose(space));
    if (file_type >= 0)
        QUIET(H5Tclose(file_type));
    if (t->dset < 0) {
        if (t->mem_type >= 0)
            QUIET(H5Tclose(t->mem_type));
        free_layout(t);
        free(t);
        return qri_err(errbuf, QR_EHDF5, "%s: cannot create table %s", f->partial, path);
    }
    f->open_tables++;
    t->next = f->tables;
    f->tables = t;
    *out = t;
    for (size_t i = 0; i < n_fields; i++) {
        if (!fields[i].unit)
            continue;
        char name[128];
        snprintf(name, sizeof name, "unit:%s", fields[i].name);
        int rc = qr_h5_attr_str(f, path, name, fields[i].unit, errbuf);
        if (rc)
            return rc;
    }
    return QR_OK;
}

/* Pack, shuffle and deflate a chunk, as HDF5's filters would. */
static void filter_chunk(const qr_h5_table *t, struct chunk_job *j)
{
    size_t n = t->chunk_rows, fs = t->file_size, total = n * fs;
    const unsigned char *packed = j->rows; /* rows without padding are packed already */
    unsigned char *shuffled = j->packed + total;
    if (!t->packed_rows) {
        for (size_t r = 0; r < n; r++) {
            const unsigned char *src = j->rows + r * t->row_size;
            unsigned char *dst = j->packed + r * fs;
            for (size_t i = 0; i < t->n_fields; i++)
                memcpy(dst + t->file_off[i], src + t->mem_off[i], t->size[i]);
        }
        packed = j->packed;
    }
    /* shuffle: byte b of every row, then byte b + 1 ... */
    for (size_t b = 0; b < fs; b++) {
        unsigned char *o = shuffled + b * n;
        const unsigned char *in = packed + b;
        for (size_t r = 0; r < n; r++)
            o[r] = in[r * fs];
    }
    /* zlib's format, as compress2 writes it; a table marked rle with run-length matches only
     * (Z_RLE): shuffled tables are mostly runs of equal bytes, which RLE finds at a fraction of
     * level 1's cost, at some size on tables of varied bytes */
    z_stream z;
    memset(&z, 0, sizeof z);
    j->err =
        deflateInit2(&z, DEFLATE, Z_DEFLATED, 15, 8, t->rle ? Z_RLE : Z_DEFAULT_STRATEGY) != Z_OK;
    if (j->err)
        return;
    z.next_in = shuffled;
    z.avail_in = (uInt)total;
    z.next_out = j->out;
    z.avail_out = (uInt)compressBound((uLong)total);
    j->err = deflate(&z, Z_FINISH) != Z_STREAM_END;
    j->out_len = z.total_out;
    deflateEnd(&z);
}

static void *worker_main(void *arg)
{
    qr_h5_table *t = arg;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        if (t->claimed < t->submitted) {
            struct chunk_job *j = &t->jobs[t->claimed++ % NJOBS];
            pthread_mutex_unlock(&t->mu);
            filter_chunk(t, j);
            pthread_mutex_lock(&t->mu);
            j->filtered = 1;
            pthread_cond_broadcast(&t->cv);
        } else if (t->stop) {
            break;
        } else {
            pthread_cond_wait(&t->cv, &t->mu);
        }
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* Write a filtered chunk with the dataset grown to `rows`. */
static int write_chunk(qr_h5_table *t, const struct chunk_job *j, uint64_t rows, char *errbuf)
{
    if (j->err)
        return qri_err(errbuf, QR_ENOMEM, "%s: table %s: cannot compress a chunk", t->f->partial,
                       t->path);
    hsize_t size[1] = {rows}, offset[1] = {j->first_row};
    errno = 0;
    int ok =
        QUIET(H5Dset_extent(t->dset, size)) >= 0 &&
        QUIET(H5Dwrite_chunk(t->dset, H5P_DEFAULT, 0, offset, (size_t)j->out_len, j->out)) >= 0;
    if (!ok)
        return qri_err(errbuf, QR_EHDF5, "%s: cannot write table %s: %s", t->f->partial, t->path,
                       why(errno));
    return QR_OK;
}

/* Write the chunks the workers have filtered, in order; wait for them while `until` or more
 * chunks are with them (1: until every chunk is written). */
static int write_done(qr_h5_table *t, uint64_t until, char *errbuf)
{
    while (t->written < t->submitted) {
        struct chunk_job *j = &t->jobs[t->written % NJOBS];
        pthread_mutex_lock(&t->mu);
        while (!j->filtered && t->submitted - t->written >= until)
            pthread_cond_wait(&t->cv, &t->mu);
        int ready = j->filtered;
        j->filtered = 0;
        pthread_mutex_unlock(&t->mu);
        if (!ready)
            return QR_OK;
        int rc = write_chunk(t, j, j->first_row + t->chunk_rows, errbuf);
        t->written++;
        if (rc)
            return rc;
    }
    return QR_OK;
}

static int job_alloc(qr_h5_table *t, struct chunk_job *j)
{
    if (j->rows)
        return QR_OK;
    j->rows = malloc(t->chunk_rows * t->row_size);
    j->packed = malloc(2 * t->chunk_rows * t->file_size);
    j->out = malloc(compressBound((uLong)(t->chunk_rows * t->file_size)));
    return j->rows && j->packed && j->out ? QR_OK : QR_ENOMEM;
}

static int start_worker(qr_h5_table *t)
{
    if (pthread_mutex_init(&t->mu, NULL))
        return QR_ENOMEM;
    if (pthread_cond_init(&t->cv, NULL)) {
        pthread_mutex_destroy(&t->mu);
        return QR_ENOMEM;
    }
    for (int i = 0; i < t->f->workers; i++)
        if (pthread_create(&t->thread[i], NULL, worker_main, t) == 0)
            t->worker++;
    if (!t->worker) {
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        return QR_ENOMEM;
    }
    return QR_OK;
}

/* The chunk being filled is full (or, at close, the last one): hand it to the worker, or at close
 * (or without a worker) filter and write it here after the others. */
static int flush_rows(qr_h5_table *t, int last, char *errbuf)
{
    struct chunk_job *j = &t->jobs[t->submitted % NJOBS];
    if (t->buffered == 0)
        return t->worker ? write_done(t, 1, errbuf) : QR_OK;
    j->first_row = t->rows - t->buffered;
    if (t->buffered < t->chunk_rows) /* the rows past the end are never read: zeros */
        memset(j->rows + t->buffered * t->row_size, 0, (t->chunk_rows - t->buffered) * t->row_size);
    t->buffered = 0;
    if (!last && !t->worker)
        start_worker(t); /* without a thread the chunks are filtered here */
    if (last || !t->worker) {
        int rc = t->worker ? write_done(t, 1, errbuf) : QR_OK;
        if (rc)
            return rc;
        filter_chunk(t, j);
        rc = write_chunk(t, j, last ? t->rows : j->first_row + t->chunk_rows, errbuf);
        if (!last)
            t->buf = j->rows; /* the same chunk again */
        return rc;
    }
    /* room for the next chunk: the ring's oldest must be written */
    int rc = write_done(t, NJOBS - 1, errbuf);
    if (rc)
        return rc;
    struct chunk_job *next = &t->jobs[(t->submitted + 1) % NJOBS];
    if (job_alloc(t, next))
        return qri_err(errbuf, QR_ENOMEM, "%s: table %s: out of memory", t->f->partial, t->path);
    pthread_mutex_lock(&t->mu);
    t->submitted++;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    t->buf = next->rows;
    return QR_OK;
}

int qr_h5_table_append(qr_h5_table *t, const void *rows, size_t n, char *errbuf)
{
    if (!t || (!rows && n))
        return qri_err(errbuf, QR_EINVAL, "h5: NULL argument");
    const unsigned char *src = rows;
    while (n > 0) {
        size_t take = t->chunk_rows - t->buffered;
        if (take > n)
            take = n;
        memcpy(t->buf + t->buffered * t->row_size, src, take * t->row_size);
        t->buffered += take;
        t->rows += take;
        src += take * t->row_size;
        n -= take;
        if (t->buffered == t->chunk_rows) {
            int rc = flush_rows(t, 0, errbuf);
            if (rc)
                return rc;
        }
    }
    return QR_OK;
}

uint64_t qr_h5_table_rows(const qr_h5_table *t)
{
    return t->rows;
}

static void free_layout(qr_h5_table *t)
{
    free(t->file_off);
    free(t->mem_off);
    free(t->size);
    for (int j = 0; j < NJOBS; j++) {
        free(t->jobs[j].rows);
        free(t->jobs[j].packed);
        free(t->jobs[j].out);
    }
}

/* Unlink a table from its file and free it, without writing (the worker stopped first). */
static void release_table(qr_h5_table *t)
{
    if (t->worker) {
        pthread_mutex_lock(&t->mu);
        t->stop = 1;
        pthread_cond_broadcast(&t->cv);
        pthread_mutex_unlock(&t->mu);
        for (int i = 0; i < t->worker; i++)
            pthread_join(t->thread[i], NULL);
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        t->worker = 0;
    }
    for (qr_h5_table **pp = &t->f->tables; *pp; pp = &(*pp)->next) {
        if (*pp == t) {
            *pp = t->next;
            break;
        }
    }
    QUIET(H5Dclose(t->dset));
    QUIET(H5Tclose(t->mem_type));
    t->f->open_tables--;
    free_layout(t);
    free(t);
}

void qr_h5_table_rle(qr_h5_table *t)
{
    if (t)
        t->rle = 1;
}

int qr_h5_table_close(qr_h5_table *t, char *errbuf)
{
    if (!t)
        return QR_OK;
    int rc = flush_rows(t, 1, errbuf);
    if (!rc)
        rc = qr_h5_attr_u64(t->f, t->path, "rows", t->rows, errbuf);
    release_table(t);
    return rc;
}

/* Fill the user block of a closed file with its checksum line and sync it to disk. */
static int write_checksum(const char *partial, char *errbuf)
{
    int fd = open(partial, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return qri_err(errbuf, QR_EIO, "%s: cannot reopen: %s", partial, strerror(errno));
    char hexsum[65], block[USERBLOCK];
    uint64_t body = 0;
    int rc = qri_sha256_fd(fd, USERBLOCK, hexsum, &body);
    if (rc) {
        close(fd);
        return qri_err(errbuf, rc, "%s: cannot read back to checksum it", partial);
    }
    memset(block, 0, sizeof block);
    snprintf(block, sizeof block, "%s%s size=%" PRIu64 "\n", SUM_TAG, hexsum, body + USERBLOCK);
    if (pwrite(fd, block, sizeof block, 0) != (ssize_t)sizeof block || fsync(fd) != 0)
        rc = qri_err(errbuf, QR_EIO, "%s: cannot write its checksum: %s", partial,
                     errno ? strerror(errno) : "short write");
    if (close(fd) != 0 && !rc)
        rc = qri_err(errbuf, QR_EIO, "%s: cannot close: %s", partial, strerror(errno));
    return rc;
}

int qr_h5_commit(qr_h5 *f, char *errbuf)
{
    if (!f)
        return qri_err(errbuf, QR_EINVAL, "h5: NULL file");
    if (f->open_tables) {
        qr_h5_abort(f);
        return qri_err(errbuf, QR_ESTATE, "h5: commit with tables still open");
    }
    int rc = QR_OK;
    errno = 0;
    if (QUIET(H5Fflush(f->file, H5F_SCOPE_GLOBAL)) < 0) {
        rc = qri_err(errbuf, QR_EHDF5, "%s: cannot finish: %s", f->partial, why(errno));
        if (QUIET(H5Fclose(f->file)) >= 0) /* else left to the exit (h5_exit) */
            files_open--;
    } else if (QUIET(H5Fclose(f->file)) < 0) {
        rc = qri_err(errbuf, QR_EHDF5, "%s: cannot finish HDF5 file", f->partial);
    } else {
        files_open--;
    }
    if (!rc)
        rc = write_checksum(f->partial, errbuf);
    if (!rc)
        rc = qr_commit_path(f->partial, f->path, errbuf);
    if (rc)
        unlink(f->partial);
    qr_partial_done(f->partial);
    free(f);
    return rc;
}

void qr_h5_abort(qr_h5 *f)
{
    if (!f)
        return;
    while (f->tables)
        release_table(f->tables);
    if (QUIET(H5Fclose(f->file)) >= 0)
        files_open--;
    unlink(f->partial);
    qr_partial_done(f->partial);
    free(f);
}

struct qr_h5_reader {
    hid_t file;
    char path[1024];
};

/* Parse a user block: 0 and the digest and size it names, or QR_EFORMAT. */
static int parse_block(const char *path, const char *block, char hexsum[65], uint64_t *size,
                       char *errbuf)
{
    size_t tag = sizeof SUM_TAG - 1;
    if (memcmp(block, SUM_TAG, tag) != 0)
        return qri_err(errbuf, QR_EFORMAT,
                       "%s: not a result file of this qreplay (no qreplay checksum at its start: "
                       "written by another program or an older qreplay, or damaged); make it "
                       "again with the command that wrote it",
                       path);
    unsigned long long n = 0;
    int used = 0;
    memcpy(hexsum, block + tag, 64);
    hexsum[64] = '\0';
    for (int i = 0; i < 64; i++)
        if (!strchr("0123456789abcdef", hexsum[i]) || !hexsum[i])
            return qri_err(errbuf, QR_EFORMAT, "%s: damaged (its checksum line is not one)", path);
    if (sscanf(block + tag + 64, " size=%llu%n", &n, &used) != 1 || block[tag + 64 + used] != '\n')
        return qri_err(errbuf, QR_EFORMAT, "%s: damaged (its checksum line is not one)", path);
    /* the block is exactly what the writer wrote: that line, then zeros */
    char again[USERBLOCK];
    memset(again, 0, sizeof again);
    snprintf(again, sizeof again, "%s%s size=%llu\n", SUM_TAG, hexsum, n);
    if (memcmp(again, block, USERBLOCK) != 0)
        return qri_err(errbuf, QR_EFORMAT, "%s: damaged (its header block was changed)", path);
    *size = n;
    return QR_OK;
}

/* Verify the file's checksum; for a file of at most image_max bytes, hand back its bytes (caller
 * frees) so that HDF5 parses exactly what was verified. */
static int verify_file(const char *path, size_t image_max, unsigned char **image,
                       size_t *image_size, char *errbuf)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return qri_err(errbuf, errno == ENOENT ? QR_ENOENT : QR_EIO, "%s: %s", path,
                       strerror(errno));
    struct stat st;
    char block[USERBLOCK + 1], want[65], got[65];
    uint64_t size = 0;
    int rc = QR_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = qri_err(errbuf, QR_EFORMAT, "%s: not a regular file", path);
    else if ((uint64_t)st.st_size < USERBLOCK ||
             pread(fd, block, USERBLOCK, 0) != (ssize_t)USERBLOCK)
        rc = qri_err(errbuf, QR_EFORMAT,
                     "%s: not a result file of this qreplay (%lld bytes: shorter than its header)",
                     path, (long long)st.st_size);
    block[USERBLOCK] = '\0';
    if (!rc)
        rc = parse_block(path, block, want, &size, errbuf);
    if (!rc && size != (uint64_t)st.st_size)
        rc = qri_err(errbuf, QR_EFORMAT,
                     "%s: damaged: %lld bytes where qreplay wrote %" PRIu64
                     " (cut short, or written to after)",
                     path, (long long)st.st_size, size);
    unsigned char *buf = NULL;
    if (!rc && size <= image_max) {
        buf = malloc(size);
        size_t have = 0;
        while (buf && have < size) {
            ssize_t n = pread(fd, buf + have, size - have, (off_t)have);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            have += (size_t)n;
        }
        if (!buf)
            rc = QR_ENOMEM;
        else if (have != size)
            rc = qri_err(errbuf, QR_EIO, "%s: read error", path);
        else
            rc = qri_sha256_buf(buf + USERBLOCK, size - USERBLOCK, got);
    } else if (!rc) {
        uint64_t body = 0;
        rc = qri_sha256_fd(fd, USERBLOCK, got, &body);
        if (rc)
            qri_err(errbuf, rc, "%s: read error", path);
    }
    close(fd);
    /* compared whole, without an early exit (and so without handing a fuzzer's comparison
     * tracing the digest it would need to forge) */
    unsigned diff = 0;
    for (int i = 0; !rc && i < 64; i++)
        diff |= (unsigned)(want[i] ^ got[i]);
    if (!rc && diff != 0)
        rc = qri_err(errbuf, QR_EFORMAT,
                     "%s: damaged: its content does not match the checksum qreplay wrote with it "
                     "(changed or corrupted after it was written); make it again with the "
                     "command that wrote it",
                     path);
    if (rc) {
        free(buf);
        return rc;
    }
    *image = buf;
    *image_size = buf ? size : 0;
    return QR_OK;
}

int qr_h5_open(qr_h5_reader **out, const char *path, char *errbuf)
{
    return qri_h5_open_tuned(out, path, QRI_H5_TUNING_DEFAULT, errbuf);
}

int qri_h5_open_tuned(qr_h5_reader **out, const char *path, qri_h5_tuning tuning, char *errbuf)
{
    if (!out || !path)
        return qri_err(errbuf, QR_EINVAL, "h5: NULL argument");
    h5_init();
    unsigned char *image = NULL;
    size_t image_size = 0;
    int rc = verify_file(path, tuning.image_max, &image, &image_size, errbuf);
    if (rc)
        return rc;
    qr_h5_reader *r = calloc(1, sizeof *r);
    if (!r) {
        free(image);
        return QR_ENOMEM;
    }
    snprintf(r->path, sizeof r->path, "%s", path);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (image) {
        H5Pset_fapl_core(fapl, 1 << 20, 0);
        H5Pset_file_image(fapl, image, image_size); /* copied */
    }
    /* the core driver refuses an image under the name of a file that exists, and takes two images
     * of one name for one file: give each a name of its own that no file can have (nothing can be
     * created in /proc/self) */
    static unsigned long images;
    char name[64];
    snprintf(name, sizeof name, "/proc/self/qreplay-h5-image-%lu", ++images);
    r->file = QUIET(H5Fopen(image ? name : path, H5F_ACC_RDONLY, fapl));
    QUIET(H5Pclose(fapl));
    free(image);
    if (r->file < 0) {
        free(r);
        return qri_err(errbuf, QR_EFORMAT, "%s: cannot open as HDF5", path);
    }
    files_open++;
    *out = r;
    return QR_OK;
}

void qr_h5_close(qr_h5_reader *r)
{
    if (!r)
        return;
    if (QUIET(H5Fclose(r->file)) >= 0)
        files_open--;
    free(r);
}

static hid_t open_attr(qr_h5_reader *r, const char *obj, const char *name, char *errbuf)
{
    if (QUIET(H5Aexists_by_name(r->file, obj, name, H5P_DEFAULT)) <= 0) {
        qri_err(errbuf, QR_ENOTFOUND, "%s: %s: no attribute '%s'", r->path, obj, name);
        return -1;
    }
    hid_t a = QUIET(H5Aopen_by_name(r->file, obj, name, H5P_DEFAULT, H5P_DEFAULT));
    if (a < 0)
        qri_err(errbuf, QR_ENOTFOUND, "%s: %s: cannot open attribute '%s'", r->path, obj, name);
    return a;
}

int qr_h5_read_attr_str(qr_h5_reader *r, const char *obj, const char *name, char **value,
                        char *errbuf)
{
    hid_t a = open_attr(r, obj, name, errbuf);
    if (a < 0)
        return QR_ENOTFOUND;
    hid_t ft = H5Aget_type(a);
    int rc = QR_OK;
    if (H5Tget_class(ft) != H5T_STRING) {
        rc = qri_err(errbuf, QR_EFORMAT, "%s: %s: attribute '%s' is not text", r->path, obj, name);
    } else if (H5Tis_variable_str(ft) != 0) {
        /* never written by this qreplay; reading one is what a damaged heap crashes libhdf5 on */
        rc = qri_err(errbuf, QR_EFORMAT,
                     "%s: %s: attribute '%s' is variable-length text (not written by this qreplay)",
                     r->path, obj, name);
    } else {
        size_t n = H5Tget_size(ft);
        char *v = n > 0 && n <= (1u << 20) ? calloc(1, n + 1) : NULL;
        if (n == 0 || n > (1u << 20))
            rc = qri_err(errbuf, QR_EFORMAT, "%s: %s: attribute '%s' of %zu bytes", r->path, obj,
                         name, n);
        else if (!v)
            rc = QR_ENOMEM;
        else if (QUIET(H5Aread(a, ft, v)) < 0) {
            free(v);
            rc = qri_err(errbuf, QR_EFORMAT, "%s: %s: cannot read '%s'", r->path, obj, name);
        } else
            *value = v;
    }
    QUIET(H5Tclose(ft));
    QUIET(H5Aclose(a));
    return rc;
}

int qr_h5_read_attr_f64(qr_h5_reader *r, const char *obj, const char *name, double *value,
                        char *errbuf)
{
    hid_t a = open_attr(r, obj, name, errbuf);
    if (a < 0)
        return QR_ENOTFOUND;
    int rc = QR_OK;
    if (QUIET(H5Aread(a, H5T_NATIVE_DOUBLE, value)) < 0)
        rc = qri_err(errbuf, QR_EFORMAT, "%s: %s: attribute '%s' is not a number", r->path, obj,
                     name);
    QUIET(H5Aclose(a));
    return rc;
}

int qr_h5_read_table(qr_h5_reader *r, const char *path, const qr_h5_field *fields, size_t n_fields,
                     size_t row_size, void **rows, size_t *n_rows, char *errbuf)
{
    if (QUIET(H5Lexists(r->file, path, H5P_DEFAULT)) <= 0)
        return qri_err(errbuf, QR_ENOTFOUND, "%s: no table %s", r->path, path);
    hid_t d = QUIET(H5Dopen2(r->file, path, H5P_DEFAULT));
    if (d < 0)
        return qri_err(errbuf, QR_ENOTFOUND, "%s: cannot open table %s", r->path, path);
    hid_t ft = H5Dget_type(d);
    int rc = QR_OK;
    for (size_t i = 0; i < n_fields && !rc; i++)
        if (H5Tget_member_index(ft, fields[i].name) < 0)
            rc = qri_err(errbuf, QR_EFORMAT, "%s: table %s has no field '%s'", r->path, path,
                         fields[i].name);
    hid_t mt = rc ? -1 : H5Tcreate(H5T_COMPOUND, row_size);
    for (size_t i = 0; i < n_fields && !rc; i++) {
        hid_t t = field_type(&fields[i]);
        if (t < 0 || H5Tinsert(mt, fields[i].name, fields[i].offset, t) < 0)
            rc = qri_err(errbuf, QR_EFORMAT, "%s: table %s: bad field '%s'", r->path, path,
                         fields[i].name);
        if (t >= 0)
            QUIET(H5Tclose(t));
    }
    hid_t sp = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    void *buf = NULL;
    if (!rc) {
        buf = n >= 0 && (uint64_t)n <= SIZE_MAX / row_size ? calloc(n > 0 ? (size_t)n : 1, row_size)
                                                           : NULL;
        if (n < 0 || (uint64_t)n > SIZE_MAX / row_size)
            rc = qri_err(errbuf, QR_EFORMAT, "%s: table %s: damaged size", r->path, path);
        else if (!buf)
            rc = QR_ENOMEM;
        else if (n > 0 && QUIET(H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf)) < 0)
            rc = qri_err(errbuf, QR_EFORMAT, "%s: table %s: fields of another kind", r->path, path);
    }
    if (mt >= 0)
        QUIET(H5Tclose(mt));
    QUIET(H5Sclose(sp));
    QUIET(H5Tclose(ft));
    QUIET(H5Dclose(d));
    if (rc) {
        free(buf);
        return rc;
    }
    *rows = buf;
    *n_rows = (size_t)n;
    return QR_OK;
}

void qr_h5_rows_free(void *rows)
{
    free(rows);
}

void qr_h5_str_free(char *value)
{
    free(value);
}
