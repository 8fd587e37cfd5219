/* qreplay internal: the light record's file format constants and the reader's state, shared by
 * the reader (light_read.c) and the recording built from a light record (light_recording.c); the
 * writer (light_write.c) shares the constants. */
#ifndef QREPLAY_LIGHT_INTERNAL_H
#define QREPLAY_LIGHT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "qreplay/light.h"

#define MAGIC "QRLIGHT1"
#define BLOCK_HDR 16 /* part, th, reserved (u8 u8 u16), raw length, stored length, CRC-32 (u32) */
#define MAX_BLOCK (1u << 26) /* 64 MiB: a chunk's part (the writer ends a chunk sooner) */
#define PART_END 0xff

/* A block's raw bytes as they are made: put bytes, put varints; out of memory is remembered
 * (oom) and said when the block is written. */
struct qri_lbuf {
    uint8_t *b;
    size_t n, cap;
    int oom;
};
void qri_lbuf_put(struct qri_lbuf *w, const void *p, size_t n);
void qri_lbuf_uv(struct qri_lbuf *w, uint64_t v);

/* A block as read (qri_light_block_read): its part, threshold and inflated bytes; `no` and
 * `offset` count the blocks and bytes read so far (start offset at the first block's byte). */
struct qri_block {
    uint8_t *cbuf, *raw;
    uint64_t no, offset;
    unsigned part, th;
    uint32_t rlen, clen;
};

/* One block of raw[0..n) deflated at level, written to f; *stored: its bytes in the file. Returns
 * 0, QR_EVALUE (over MAX_BLOCK), QR_ENOMEM or QR_EIO, naming path. */
int qri_light_block_write(FILE *f, const char *path, unsigned part, unsigned th, const uint8_t *raw,
                          size_t n, int level, size_t *stored, char *err);
/* The next block of f into b: its header's lengths checked, inflated, its CRC checked. Returns 0,
 * QR_EFORMAT naming path, block and byte, or QR_ENOMEM. */
int qri_light_block_read(FILE *f, const char *path, struct qri_block *b, char *err);
void qri_light_block_free(struct qri_block *b);

/* packet flags of a direction, in the reader */
#define F_LOST 1
#define F_DETECTED 2
#define F_CE 4
#define F_UNKNOWN 8 /* its receiver was not seen, and nothing says it was lost */

struct ldir {
    uint32_t n, n_lost; /* packets sent, lost */
    unsigned seen;      /* QR_TC_AT_*: which ends a capture saw */
    size_t at;          /* its packets' place in the flat arrays */
    size_t loss_off;    /* its lists in its chunk's loss block (while reading) */
    int64_t last_send;  /* inferred at the smallest threshold */
    int at_once;        /* its receive times left out: its packets arrive at once */
    size_t gate_at;     /* its gates: gate_seq/gate_sends[gate_at .. + n_gates) */
    uint32_t n_gates;
};

struct lgroup {
    uint64_t pos; /* in the host's (time, direction, number) order */
    uint32_t m;
    uint32_t *rank; /* m */
};

struct lhost_order {
    struct lgroup *g;
    size_t n;
};

struct qr_light {
    char path[4096];
    char id[QR_ID_SIZE];
    qr_scenario *scenario;
    char *scenario_text;
    qr_flow *flows;
    size_t n_flows;
    qr_flow_table *ft;
    uint32_t n_hosts;
    int64_t *offsets;
    qr_sampling_method method;
    int imported;  /* recording_kind=import */
    int version;   /* the header's: 1 (every receive time kept) or 2 */
    char why[256]; /* why its packets cannot be regenerated ("" if they can) */
    qr_light_stats st;
    struct ldir *dirs;
    size_t n_dirs;
    uint8_t *flags;                  /* per packet: F_* */
    int64_t *recv;                   /* per packet: receive time (receiver's clock); lost: 0 */
    uint32_t *gate_seq, *gate_sends; /* every direction's gates, in direction order */
    size_t n_gate_all;
    qr_sample_record **recs[QR_LIGHT_MAX_TH]; /* per th, per direction */
    size_t *n_recs[QR_LIGHT_MAX_TH];
    struct lhost_order *order[QR_LIGHT_MAX_TH]; /* per th, per host */
};

#endif
