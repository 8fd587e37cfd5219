/* qreplay internal: the recording's state, shared by the reader (recording.c) and the
 * modules that build one (import_run.c, light_recording.c: qr_recording_from_light). */
#ifndef QREPLAY_RECORDING_INTERNAL_H
#define QREPLAY_RECORDING_INTERNAL_H

#include "qreplay/recording.h"

struct host_pk {
    qr_rec_packet *pk;
    size_t n, cap;
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
    uint64_t *detected; /* sorted packet ids */
    size_t n_detected;
    struct recv_entry *received; /* sorted by packet */
    size_t n_received;
    int has_received;
    uint64_t *ce; /* /received_ce: sorted packet ids (NULL: not recorded) */
    size_t n_ce;
    uint64_t *late; /* /import/late: sorted packet ids (NULL: none recorded) */
    size_t n_late;
    uint8_t *seen; /* imports: per direction, whose observations it holds (NULL: both ends) */
    size_t n_seen;
    int network_known;  /* imports: the captures come from the scenario's network */
    qr_row_path *paths; /* /paths (NULL: none) */
    size_t n_paths;
    int has_paths;
    qr_row_icmp *icmp; /* /icmp (NULL: none) */
    size_t n_icmp;
    int has_icmp;
    char id[QR_ID_SIZE];
    int64_t end_ns;  /* when the run stopped recording (recording.h5 sim_end_ns; 0: unknown) */
    char *dir;       /* the recording folder */
    int tables_only; /* qr_recording_open_tables: no packets read */
    qr_row_host *host_rows; /* /hosts (pcap names, packet counts); kept for a stream */
};

/* recording.h5 /pcaps: the size and SHA-256 of each host's pcap (rec_dir/pcap/hNNNN.pcap, those
 * that exist), so that a reader can refuse another run's. Returns 0 or the writer's error. */
struct qr_h5;
int qri_recording_write_pcaps(struct qr_h5 *f, const char *rec_dir, uint32_t n_hosts, char *errbuf);
#endif
