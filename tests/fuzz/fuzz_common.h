/* Shared by the fuzz targets: the input as a file (the readers take paths), and a property check
 * that aborts (so libFuzzer keeps the input) with a message. */
#ifndef QR_FUZZ_COMMON_H
#define QR_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Write data to this process's scratch file and return its path (overwritten every call). */
__attribute__((unused)) static const char*
fuzz_file(const uint8_t* data, size_t size, const char* suffix)
{
    static char path[128];
    snprintf(path, sizeof path, "/tmp/qr-fuzz-%ld%s", (long)getpid(), suffix);
    FILE* f = fopen(path, "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    return path;
}

#define FUZZ_CHECK(cond, ...)                                                                      \
    do                                                                                             \
    {                                                                                              \
        if (!(cond))                                                                               \
        {                                                                                          \
            fprintf(stderr, "property broken: " __VA_ARGS__);                                      \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

#endif
