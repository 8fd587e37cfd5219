#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *qr_strerror(int code)
{
    switch (code) {
    case QR_OK: return "success";
    case QR_END: return "no more items";
    case QR_EINVAL: return "invalid argument";
    case QR_ENOMEM: return "out of memory";
    case QR_EIO: return "input/output error";
    case QR_ENOENT: return "no such file";
    case QR_ESYNTAX: return "syntax error";
    case QR_EKEY: return "unknown section or key";
    case QR_EDUP: return "duplicate key";
    case QR_EVALUE: return "bad value";
    case QR_EUNIT: return "missing or wrong unit";
    case QR_EFORMAT: return "unsupported file format";
    case QR_ETRUNC: return "truncated file";
    case QR_EORDER: return "out of order";
    case QR_ESTATE: return "invalid state";
    case QR_EHDF5: return "HDF5 error";
    case QR_ENOTFOUND: return "not found";
    case QR_ECANCELED: return "canceled";
    case QR_ESAMEFILE: return "an output is one of the inputs";
    case QR_ESTALE: return "made from another recording";
    default: return "unknown error";
    }
}

int qri_err(char *errbuf, int code, const char *fmt, ...)
{
    if (errbuf) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(errbuf, QR_ERRBUF_SIZE, fmt, ap);
        va_end(ap);
    }
    return code;
}

void qri_err_prefix(char *errbuf, const char *fmt, ...)
{
    if (!errbuf)
        return;
    char prefix[QR_ERRBUF_SIZE];
    char old[QR_ERRBUF_SIZE];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, errbuf, sizeof old);
    old[sizeof old - 1] = '\0';
    snprintf(errbuf, QR_ERRBUF_SIZE, "%s: %s", prefix, old);
}

int qri_strlcpy(char *dst, const char *src, size_t size)
{
    size_t n = strlen(src);
    if (n >= size) {
        memcpy(dst, src, size - 1);
        dst[size - 1] = '\0';
        return QR_EVALUE;
    }
    memcpy(dst, src, n + 1);
    return QR_OK;
}
