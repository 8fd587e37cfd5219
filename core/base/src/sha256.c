/* SHA-256 of files and buffers, for the provenance of imported captures, recording ids and the
 * checksums of result files (OpenSSL's libcrypto). */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"
#include "qreplay/random.h"

static void hex(const unsigned char *md, unsigned int len, char *out)
{
    for (unsigned int i = 0; i < len && i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

int qri_sha256_fd(int fd, uint64_t from, char out[65], uint64_t *size)
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    enum { BUF = 1 << 20 };
    unsigned char *buf = malloc(BUF);
    int rc = buf && ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 ? QR_OK : QR_ENOMEM;
    uint64_t total = 0, at = from;
    while (!rc) {
        ssize_t n = pread(fd, buf, BUF, (off_t)at);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = QR_EIO;
        if (n <= 0)
            break;
        total += (uint64_t)n;
        at += (uint64_t)n;
        if (EVP_DigestUpdate(ctx, buf, (size_t)n) != 1)
            rc = QR_EIO;
    }
    free(buf);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!rc && EVP_DigestFinal_ex(ctx, md, &len) != 1)
        rc = QR_EIO;
    EVP_MD_CTX_free(ctx);
    if (rc)
        return rc;
    hex(md, len, out);
    if (size)
        *size = total;
    return QR_OK;
}

int qri_sha256_file(const char *path, char out[65], uint64_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return QR_ENOENT;
    int rc = qri_sha256_fd(fileno(f), 0, out, size);
    fclose(f);
    return rc;
}

int qri_sha256_buf(const void *data, size_t n, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1)
        return QR_ENOMEM;
    hex(md, len, out);
    return QR_OK;
}

int qr_id_of(const void *data, size_t n, char out[QR_ID_SIZE])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1 || len < 16)
        return QR_ENOMEM;
    hex(md, 16, out);
    return QR_OK;
}
