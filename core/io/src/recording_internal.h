/* qreplay internal: the recording's state, shared by the whole reader (recording.c) and the
 * streamed one (recstream.c). */
#ifndef QREPLAY_RECORDING_INTERNAL_H
#define QREPLAY_RECORDING_INTERNAL_H

#include "qreplay/recording.h"

struct host_pk {
    qr_rec_packet *pk;
    size_t n, cap;
    uint32_t *order;
};

struct recv_entry {
    uint64_t packet;
    int64_t time_ns;
};

struct qr_recording {
    qr_scenario *scenario;
    qr_flow_table *flows;
    uint32_t n_hosts;
    struct host_pk *hosts;
    int64_t *offsets;
    int64_t *correction; /* taken out of every recorded send time (NULL: none) */
    uint64_t *detected;  /* sorted packet ids */
    size_t n_detected;
    struct recv_entry *received; /* sorted by packet */
    size_t n_received;
    int has_received;
    uint64_t *ce; /* /received_ce: sorted packet ids (NULL: not recorded) */
    size_t n_ce;
    uint64_t *late; /* /import/late: sorted packet ids (NULL: none recorded) */
    size_t n_late;
    const struct qr_light *light; /* qr_recording_from_light: its record (NULL: pcaps) */
    int64_t *light_order;         /* scratch of qr_recording_sample on a light recording */
    uint8_t *seen; /* imports: per direction, whose observations it holds (NULL: both ends) */
    size_t n_seen;
    int network_known;  /* imports: the captures come from the scenario's network */
    qr_row_path *paths; /* /paths (NULL: none) */
    size_t n_paths;
    int has_paths;
    char id[QR_ID_SIZE];
    size_t *cursor;                /* whole: per host, the next position in its injection order */
    char *dir;                     /* the recording folder */
    qr_row_host *host_rows;        /* /hosts (pcap names, packet counts); kept for a stream */
    struct qri_rec_stream *stream; /* opened by qr_recording_open_stream (NULL: read whole) */
};

struct qri_rec_stream;

/* recording.c: host h's capture, r->dir/its /hosts pcap name, into path (size bytes). */
void qri_recording_pcap_path(const qr_recording *r, uint32_t h, char *path, size_t size);
/* recording.h5 /pcaps: the size and SHA-256 of each host's pcap (rec_dir/pcap/hNNNN.pcap, those
 * that exist), so that a reader can refuse another run's. Returns 0 or the writer's error. */
struct qr_h5;
int qri_recording_write_pcaps(struct qr_h5 *f, const char *rec_dir, uint32_t n_hosts, char *errbuf);
/* recording.c: recording.h5 read into r (everything but the pcaps; /received, a row per packet,
 * only with received). */
int qri_recording_load(qr_recording *r, const char *dir, const qr_scenario *check, int received,
                       char *errbuf);
/* light.c: qr_recording_sample of a recording made by qr_recording_from_light */
int qri_light_sample(qr_recording *r, qr_sampling_method method, int64_t th_ns,
                     qr_sampling_stats *stats, qr_row_sample_record **records, size_t *n_records,
                     char *errbuf);
/* recstream.c */
void qri_rec_stream_free(struct qri_rec_stream *st, uint32_t n_hosts);
int qri_rec_stream_next(qr_recording *r, uint32_t h, const qr_rec_packet **p, char *errbuf);
void qri_rec_stream_take(qr_recording *r, uint32_t h);
int qri_rec_stream_started(const struct qri_rec_stream *st);

#endif
