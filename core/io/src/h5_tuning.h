/* qreplay internal: the HDF5 layer's two tuning knobs, as arguments (h5.c). qr_h5_create and
 * qr_h5_open take the defaults; the tests take the other ways through these. */
#ifndef QREPLAY_H5_TUNING_H
#define QREPLAY_H5_TUNING_H

#include <stddef.h>

#include "qreplay/h5.h"

typedef struct qri_h5_tuning {
    /* threads filtering a table's chunks (claimed in order, finished in any order, written in
     * order), 1 to 4. One: on this 2-core machine a second made qreplay metrics slower (1.8 s ->
     * 2.0 s at k=8), the caller's thread being as busy as the compression */
    int workers;
    /* files up to this size are read whole and opened from memory (HDF5's core driver), so that
     * what is parsed is exactly what was verified; larger ones are verified, then opened on disk */
    size_t image_max;
} qri_h5_tuning;

#define QRI_H5_TUNING_DEFAULT ((qri_h5_tuning){1, (size_t)256 << 20})

int qri_h5_create_tuned(qr_h5 **out, const char *path, qri_h5_tuning tuning, char *errbuf);
int qri_h5_open_tuned(qr_h5_reader **out, const char *path, qri_h5_tuning tuning, char *errbuf);

#endif
