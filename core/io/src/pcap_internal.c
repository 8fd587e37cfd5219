/* libpcap's offline reading at nanosecond precision, for traces and captures (pcap_internal.h). */
#define _DEFAULT_SOURCE /* libpcap needs the BSD type names (u_int, u_char) */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pcap/pcap.h>

#include "internal.h"
#include "pcap_internal.h"
#include "qreplay/common.h"

int qri_pcap_open(const char *path, const char *kind, const char *formats, pcap_t **out,
                  char *errbuf)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return qri_err(errbuf, QR_ENOENT, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return qri_err(errbuf, QR_EFORMAT, "%s: is a folder, not a %s", path, kind);
    if (st.st_size == 0)
        return qri_err(errbuf, QR_ETRUNC, "%s: empty file (no %s header)", path, formats);
    char pe[PCAP_ERRBUF_SIZE] = "";
    pcap_t *pc = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, pe);
    if (!pc) {
        int code = strstr(pe, "truncated") ? QR_ETRUNC : QR_EFORMAT;
        if (strstr(pe, "No such file") || strstr(pe, "Permission denied"))
            code = QR_ENOENT;
        return qri_err(errbuf, code, "%s: not a readable %s file (%s)", path, formats, pe);
    }
    *out = pc;
    return QR_OK;
}

uint64_t qri_pcap_first_offset(pcap_t *pc)
{
    return pcap_major_version(pc) == 2 ? 24 : 0; /* classic pcap: a 24-byte file header */
}

int qri_pcap_next(pcap_t *pc, const char *path, uint64_t count, uint64_t *offset,
                  struct pcap_pkthdr **h, const u_char **data, int64_t *time_ns, char *warning,
                  size_t warning_size, char *errbuf)
{
    int rc = pcap_next_ex(pc, h, data);
    if (rc == PCAP_ERROR_BREAK)
        return QR_END;
    if (rc != 1) {
        const char *msg = pcap_geterr(pc);
        if (strstr(msg, "truncated")) {
            /* the file ends inside its last record (a capture stopped mid-write): the whole
             * packets before it are the capture */
            if (*offset)
                snprintf(warning, warning_size,
                         "%s: the last record, at byte %" PRIu64 ", is cut short (the capture "
                         "stopped mid-write); read the %" PRIu64 " whole packets before it",
                         path, *offset, count);
            else
                snprintf(warning, warning_size,
                         "%s: the last block is cut short at the end of the file (the capture "
                         "stopped mid-write); read the %" PRIu64 " whole packets before it",
                         path, count);
            return QR_END;
        }
        return qri_err(errbuf, QR_EFORMAT, "%s: packet %" PRIu64 ": %s", path, count + 1, msg);
    }
    /* the next record's offset, counted rather than asked of the FILE (ftell is a system call) */
    const struct pcap_pkthdr *x = *h;
    if (*offset)
        *offset += 16 + x->caplen;
    /* nanoseconds (the readers ask libpcap for nanosecond precision whatever the file's) */
    if (x->ts.tv_usec < 0 || x->ts.tv_usec >= 1000000000)
        return qri_err(errbuf, QR_EVALUE,
                       "%s: packet %" PRIu64 ": a damaged record header: its sub-second field is "
                       "not a fraction of a second",
                       path, count + 1);
    if (x->ts.tv_sec < 0)
        return qri_err(errbuf, QR_EVALUE,
                       "%s: packet %" PRIu64 ": a damaged record header: its seconds field is "
                       "negative (%lld)",
                       path, count + 1, (long long)x->ts.tv_sec);
    if ((int64_t)x->ts.tv_sec > QR_TIME_MAX / 1000000000)
        return qri_err(errbuf, QR_EVALUE,
                       "%s: packet %" PRIu64 ": timestamp %lld s is beyond 2^62 ns (the year 2116)",
                       path, count + 1, (long long)x->ts.tv_sec);
    *time_ns = (int64_t)x->ts.tv_sec * 1000000000 + (int64_t)x->ts.tv_usec;
    if (*time_ns > QR_TIME_MAX)
        return qri_err(errbuf, QR_EVALUE, "%s: packet %" PRIu64 ": timestamp beyond 2^62 ns", path,
                       count + 1);
    return QR_OK;
}
