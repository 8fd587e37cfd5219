/* qreplay: error codes and detail messages.
 *
 * Every function of libqreplay that can fail returns an int: 0 (QR_OK) on success and a negative
 * QR_E* code otherwise. Functions that read user input (files, scenario values, command-line
 * overrides) also take an error buffer of QR_ERRBUF_SIZE bytes (may be NULL) which receives a
 * one-line detail naming the file, line, field or packet at fault. The library never prints and
 * never exits. */
#ifndef QREPLAY_ERROR_H
#define QREPLAY_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Size of every error buffer passed to libqreplay. */
#define QR_ERRBUF_SIZE 512

enum {
    QR_OK = 0,
    QR_END = 1,         /* not an error: a reader has no more items */
    QR_EINVAL = -1,     /* invalid argument (NULL handle, out-of-range parameter) */
    QR_ENOMEM = -2,     /* out of memory */
    QR_EIO = -3,        /* reading or writing a file failed */
    QR_ENOENT = -4,     /* a named file does not exist or cannot be opened */
    QR_ESYNTAX = -5,    /* a malformed line in a text input */
    QR_EKEY = -6,       /* unknown section or key */
    QR_EDUP = -7,       /* a key given twice */
    QR_EVALUE = -8,     /* a value that does not parse or is out of range */
    QR_EUNIT = -9,      /* a value whose unit is missing or not allowed */
    QR_EFORMAT = -10,   /* a file of a foreign or unsupported format */
    QR_ETRUNC = -11,    /* a file that ends in the middle of a record */
    QR_EORDER = -12,    /* timestamps or indices going backwards */
    QR_ESTATE = -13,    /* a call that is not valid in the object's current state */
    QR_EHDF5 = -14,     /* the HDF5 library reported an error */
    QR_ENOTFOUND = -15, /* a looked-up item does not exist */
    QR_ECANCELED = -16, /* stopped at the caller's request (an interrupt) */
    QR_ESAMEFILE = -17, /* an output would overwrite one of the inputs */
    QR_ESTALE = -18,    /* a result made from another recording than the one beside it */
};

/* Returns a static, human-readable description of an error code; never NULL. */
const char *qr_strerror(int code);

#ifdef __cplusplus
}
#endif
#endif
