/* qreplay: the code version (git describe at build time) of the library in use. */
#ifndef QREPLAY_VERSION_H
#define QREPLAY_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

/* "0.1.0 (g1a2b3c4)" or with "-dirty"; static storage. */
const char *qr_version(void);

#ifdef __cplusplus
}
#endif
#endif
