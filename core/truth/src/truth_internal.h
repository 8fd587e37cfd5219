/* Private helpers of the truth layer. */
#ifndef QREPLAY_TRUTH_INTERNAL_H
#define QREPLAY_TRUTH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/capture.h"
#include "qreplay/flowtable.h"

/* A recording's truth/ folder written whole or not at all (truth_carry.c): stage makes
 * REC_DIR/truth.partial-PID (its path in tmp), commit replaces REC_DIR/truth with it (after
 * writing REC_DIR/QR_MIRROR_COPIES, the switches' copies, from its arrival log if it has one),
 * discard removes a staged or old folder of arrivals.qra and truth.h5. */
int qri_truth_stage(const char *rec_dir, char *tmp, size_t size, char *errbuf);
int qri_truth_commit(const char *rec_dir, const char *tmp, char *errbuf);
void qri_truth_discard(const char *dir);

/* The connections of a testbed's recording imported from its hosts' captures (/import/connections,
 * tbconns.c), and the import's time base: a captured packet's recording time is its capture time
 * less base. */
typedef struct qri_tb_conns {
    struct qri_conn *c;
    size_t n;
    int64_t base;
} qri_tb_conns;
/* Read rec_dir/recording.h5's connections (ft: the recording's flows). Returns 0, QR_EFORMAT (not
 * an imported recording, a malformed row) or the reader's error; *out is freed by qri_tb_conns_free
 * also after an error. */
int qri_tb_conns_load(const char *rec_dir, const qr_flow_table *ft, qri_tb_conns *out,
                      char *errbuf);
/* The flow direction of a captured packet (data: initiator to responder), or UINT32_MAX. */
uint32_t qri_tb_dir_of(const qri_tb_conns *cs, const qr_capture_packet *p);
/* Flow `flow`'s initiator's and responder's ports (0, 0 if it has no connection). */
void qri_tb_conns_ports(const qri_tb_conns *cs, uint32_t flow, uint16_t *p0, uint16_t *p1);
void qri_tb_conns_free(qri_tb_conns *cs);

#endif
