/* SHA-256 of a file, for the provenance of imported captures (OpenSSL's libcrypto). */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "qreplay/random.h"

int qri_sha256_file(const char *path, char out[65], uint64_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return QR_ENOENT;
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    enum { BUF = 1 << 20 };
    unsigned char *buf = malloc(BUF);
    int rc = buf && ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 ? QR_OK : QR_ENOMEM;
    size_t n;
    uint64_t total = 0;
    while (!rc && (n = fread(buf, 1, BUF, f)) > 0) {
        total += n;
        if (EVP_DigestUpdate(ctx, buf, n) != 1)
            rc = QR_EIO;
    }
    if (!rc && ferror(f))
        rc = QR_EIO;
    fclose(f);
    free(buf);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (!rc && EVP_DigestFinal_ex(ctx, md, &len) != 1)
        rc = QR_EIO;
    EVP_MD_CTX_free(ctx);
    if (rc)
        return rc;
    for (unsigned int i = 0; i < len && i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    if (size)
        *size = total;
    return QR_OK;
}

int qr_id_of(const void *data, size_t n, char out[QR_ID_SIZE])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    if (EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) != 1 || len < 16)
        return QR_ENOMEM;
    for (unsigned int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return QR_OK;
}
