/* qreplay import: the user's path file (import --paths; import.h). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import_internal.h"
#include "qreplay/flowtable.h"
#include "qreplay/fs.h"
#include "qreplay/h5.h"
#include "qreplay/import.h"
#include "qreplay/lossdet.h"
#include "qreplay/pcap_file.h"
#include "qreplay/recording.h"
#include "qreplay/sampler.h"
#include "qreplay/schema.h"
#include "qreplay/textio.h"
#include "qreplay/topology.h"
#include "qreplay/txn.h"
#include "qreplay/units.h"
#include "qreplay/version.h"
#include "recording_internal.h"

int qr_import_paths_read(const char *path, qr_import_path **out, size_t *n, char *errbuf)
{
    *out = NULL;
    *n = 0;
    qr_lines *lines;
    int rc = qr_lines_open(&lines, path, errbuf);
    if (rc)
        return rc;
    size_t cap = 0;
    char *line;
    size_t len;
    long no;
    while ((rc = qr_lines_next(lines, &line, &len, &no, errbuf)) == QR_OK) {
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *save = NULL, *tok[4 + QR_IMPORT_PATH_MAX + 1];
        size_t nt = 0;
        for (char *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
            if (nt == sizeof tok / sizeof tok[0]) {
                rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: more than %d links", path, no,
                             QR_IMPORT_PATH_MAX);
                goto done;
            }
            tok[nt++] = t;
        }
        if (nt == 0)
            continue;
        if (nt < 5) {
            rc = qri_err(errbuf, QR_ESYNTAX,
                         "%s:%ld: expected SRC SPORT DST DPORT and at least one link, got %zu "
                         "field%s",
                         path, no, nt, nt == 1 ? "" : "s");
            goto done;
        }
        if (qri_grow((void **)out, &cap, *n, sizeof **out, 64)) {
            rc = qri_err(errbuf, QR_ENOMEM, "out of memory");
            goto done;
        }
        qr_import_path *p = &(*out)[*n];
        memset(p, 0, sizeof *p);
        p->line = no;
        const char *what[4] = {"source address", "source port", "destination address",
                               "destination port"};
        for (int k = 0; k < 4; k++) {
            int bad;
            if (k % 2 == 0) {
                bad = qr_addr_parse(tok[k], k ? p->dst : p->src) != QR_OK;
            } else {
                char *end;
                unsigned long v = strtoul(tok[k], &end, 10);
                bad = !*tok[k] || *end || *tok[k] == '-' || v < 1 || v > 65535;
                *(k == 1 ? &p->sport : &p->dport) = (uint16_t)v;
            }
            if (bad) {
                rc = qri_err(errbuf, QR_EVALUE, "%s:%ld: field %d, %s: '%s' is not one", path, no,
                             k + 1, what[k], tok[k]);
                goto done;
            }
        }
        for (size_t k = 4; k < nt; k++) {
            if (strlen(tok[k]) >= sizeof p->links[0]) {
                rc =
                    qri_err(errbuf, QR_EVALUE, "%s:%ld: field %zu: link name longer than %zu bytes",
                            path, no, k + 1, sizeof p->links[0] - 1);
                goto done;
            }
            if (strcmp(tok[k], "*"))
                snprintf(p->links[p->n_links], sizeof p->links[0], "%s", tok[k]);
            p->n_links++;
        }
        (*n)++;
    }
    if (rc == QR_END)
        rc = QR_OK;
done:
    qr_lines_close(lines);
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}
