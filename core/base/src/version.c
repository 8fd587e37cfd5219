#include "qreplay/version.h"

#include "qr_version_string.h" /* generated at build time by core/version.cmake */

const char *qr_version(void)
{
    return QR_VERSION_STRING;
}
