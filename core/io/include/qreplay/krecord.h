/* qreplay: the kernel record, DETER's light record of a real Linux host (qreplay record), written
 * as the kernel hands over its TCP events and read back whole.
 *
 * Per connection (this host's end and the peer's): when it opened and closed, the application's
 * socket calls (sizes and times), every packet this host handed to its NIC reduced to what a
 * replay needs (IP sizes run-length coded in send order, GSO packets as the segments the NIC
 * sends; a packet out of sequence order keeps its sequence number), its send times through the
 * core's sampler at the chosen thresholds (sampler.h), TCP's resends with the kernel's reason,
 * and what this host saw arrive: sequence holes, ECN CE marks, zero windows. No payload, no
 * per-packet time.
 *
 * The file (docs/FORMATS.md, "The kernel record") is the light record's framing with its own
 * magic: blocks of one part each, deflated with a CRC-32 of their raw bytes, written as a part's
 * buffer fills (memory bounded by the open connections, whatever the record's length), ended by
 * an end block with the counts, the events the kernel could not hand over among them. */
#ifndef QREPLAY_KRECORD_H
#define QREPLAY_KRECORD_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/sampler.h"

#ifdef __cplusplus
extern "C" {
#endif

#define QR_KREC_MAX_TH 8

/* The record's parts (a block holds one). */
typedef enum qr_krec_part {
    QR_KREC_HEADER = 0,  /* text: the host, its namespace, the clock, the thresholds */
    QR_KREC_CONNS = 1,   /* a connection opened (or first seen), or closed */
    QR_KREC_CALLS = 2,   /* the application's send and receive calls */
    QR_KREC_SENT = 3,    /* runs of sent packets: count, IP size, sequence jumps */
    QR_KREC_SAMPLES = 4, /* the sampler's records (per threshold) */
    QR_KREC_RESENT = 5,  /* TCP's resends and why */
    QR_KREC_ARRIVED = 6, /* received: sequence holes, CE marks, zero windows */
    QR_KREC_PARTS = 7
} qr_krec_part;

/* "header", "conns", "calls", "sent", "samples", "resent", "arrived". */
const char *qr_krec_part_name(qr_krec_part p);

/* A connection's ends as this host sees them (addresses raw, IPv4 in the first 4 bytes). */
typedef struct qr_krec_ends {
    uint8_t family; /* 4 or 6 */
    uint8_t laddr[16], raddr[16];
    uint16_t lport, rport;
} qr_krec_ends;

/* An end's address (raw: 4 bytes for IPv4) in qr_addr_parse's form, IPv4 mapped into IPv6. */
void qr_krec_addr_mapped(uint8_t family, const uint8_t a[16], uint8_t out[16]);

typedef enum { QR_KREC_PROBE = 0, QR_KREC_FAST = 1, QR_KREC_RTO = 2 } qr_krec_resend;

/* What the record is of. */
typedef struct qr_krec_header {
    const char *host; /* a label: the namespace's name, or the host's */
    uint32_t netns;   /* the namespace's inode number */
    int64_t start_ns; /* the recording's start, Unix-epoch ns (every time is after it) */
    qr_sampling_method method;
    size_t n_th; /* 1 to QR_KREC_MAX_TH, increasing */
    int64_t th_ns[QR_KREC_MAX_TH];
} qr_krec_header;

/* What a record holds and costs. */
typedef struct qr_krec_stats {
    uint64_t connections, closed, calls[2], call_bytes[2]; /* [0] sends, [1] receives */
    uint64_t packets, nic_packets, bytes; /* segments sent; packets handed to the NIC (GSO: 1) */
    uint64_t payload_bytes;               /* TCP payload in what was sent */
    uint64_t resends[3];                  /* by qr_krec_resend */
    uint64_t arrived, holes, hole_bytes, ce, zero_windows;
    uint64_t duplicates, duplicate_bytes; /* arrivals of bytes that had arrived before */
    uint64_t sample_records[QR_KREC_MAX_TH];
    uint64_t events, lost_events; /* handed over by the kernel; lost on the way (ring full, and
                                     the unseen below) */
    uint64_t unseen; /* packets this host sent that no event told (gaps in an IPv4 connection's
                        IP identifications, which Linux counts per connection) */
    uint64_t recorder_lost; /* of lost_events, the recorder's own: its ring buffer full, runs the
                               kernel skipped (the rest: every recorded host's unseen packets);
                               0 in a format 4 record, which does not tell them apart */
    uint64_t reordered; /* send times before their connection's previous one (CPUs' skew): moved */
    /* writer only, not kept in the record: what it left out (qr_krec_writer_ignore_ports), and
     * TCP packets with no flag, which no TCP stack sends (a raw socket's probes) */
    uint64_t ignored_events, flagless;
    uint64_t part_bytes[QR_KREC_PARTS], file_bytes;
} qr_krec_stats;

typedef struct qr_krec_writer qr_krec_writer;

/* Start a record at path (written beside it and put in place whole by qr_krec_writer_close).
 * Returns 0, QR_EINVAL (thresholds), or QR_EIO naming the file. */
int qr_krec_writer_open(qr_krec_writer **out, const char *path, const qr_krec_header *h,
                        char *errbuf);

/* The events, in the order the kernel handed them over, times Unix-epoch ns (not before the
 * header's start). A connection is made at its first event and ends when it reaches TCP_CLOSE.
 * Each returns 0, QR_EVALUE (a time before the start, a bad field: the message says which) or
 * QR_ENOMEM / QR_EIO. */
int qr_krec_state(qr_krec_writer *w, const qr_krec_ends *e, int64_t t_ns, int old_state,
                  int new_state, char *errbuf);
int qr_krec_call(qr_krec_writer *w, const qr_krec_ends *e, int receive, uint32_t bytes,
                 int64_t t_ns, char *errbuf);
/* A packet handed to the NIC: ip_len its IP length (a GSO packet's whole), hdr its IP and TCP
 * header bytes, gso_size the segments' payload (0: not GSO). */
int qr_krec_sent(qr_krec_writer *w, const qr_krec_ends *e, uint32_t seq, uint32_t ip_len,
                 uint16_t hdr, uint32_t gso_size, uint8_t tcp_flags, int64_t t_ns, char *errbuf);
/* The same with the packet's IPv4 identification (ip_id; -1: none, IPv6): a gap in a connection's
 * identifications is packets sent that no event told, counted (qr_krec_stats.unseen) and
 * written among the lost events. */
int qr_krec_sent_ipid(qr_krec_writer *w, const qr_krec_ends *e, uint32_t seq, uint32_t ip_len,
                      uint16_t hdr, uint32_t gso_size, uint8_t tcp_flags, int32_t ip_id,
                      int64_t t_ns, char *errbuf);
/* Leave out every event of a connection with one of these ports at either end (monitors' own
 * traffic, as a capture filter leaves it out); counted in qr_krec_stats.ignored_events. At most
 * QR_KREC_MAX_IGNORE ports (else QR_EINVAL). */
#define QR_KREC_MAX_IGNORE 16
int qr_krec_writer_ignore_ports(qr_krec_writer *w, const uint16_t *ports, size_t n, char *errbuf);

/* The events the recorder itself lost (qr_krec_stats.recorder_lost), to be written at the close. */
void qr_krec_writer_recorder_lost(qr_krec_writer *w, uint64_t lost);

/* The packets sent so far that no event told (qr_krec_stats.unseen). */
uint64_t qr_krec_writer_unseen(const qr_krec_writer *w);
int qr_krec_resent(qr_krec_writer *w, const qr_krec_ends *e, uint32_t seq, qr_krec_resend why,
                   int64_t t_ns, char *errbuf);
/* A packet received from the NIC (e: this host's end first). */
int qr_krec_arrived(qr_krec_writer *w, const qr_krec_ends *e, uint32_t seq, uint32_t ip_len,
                    uint16_t hdr, uint8_t tcp_flags, int ce, uint32_t window, int64_t t_ns,
                    char *errbuf);

/* End the record: every open connection's runs and samples, the end block with the counts
 * (lost_events: what the kernel could not hand over), then the file put in place. *st (may be
 * NULL) says what it holds. Frees w whatever happens; on an error the old file at path, if any,
 * is untouched. */
int qr_krec_writer_close(qr_krec_writer *w, uint64_t events, uint64_t lost_events,
                         qr_krec_stats *st, char *errbuf);
/* Drop the record (an interrupted start): nothing is written. */
void qr_krec_writer_abort(qr_krec_writer *w);

/* A record read back. */
typedef struct qr_krec_conn {
    uint32_t id;
    qr_krec_ends ends;
    int64_t open_ns, close_ns; /* close_ns 0: still open at the end */
    int mid;                   /* first seen after it opened (already open at the start) */
    uint64_t packets, bytes, calls[2], call_bytes[2], resends[3], holes, ce, zero_windows;
    uint64_t duplicates;
} qr_krec_conn;

typedef struct qr_krec qr_krec;

/* Read a kernel record (every block checked: magic, lengths, CRC, every record against its
 * connection; the end block's counts against what was read). Returns 0, QR_ENOENT, QR_EFORMAT
 * naming the file, block and field. Caller owns *out (qr_krec_close). */
int qr_krec_open(qr_krec **out, const char *path, char *errbuf);
/* The record's format: 4 (its losses not told apart: recorder_lost and unseen 0) or 5. */
int qr_krec_format(const qr_krec *k);
void qr_krec_close(qr_krec *k);
void qr_krec_stats_get(const qr_krec *k, qr_krec_stats *st);
const char *qr_krec_host(const qr_krec *k);
/* What the record is of (its host borrowed from k). */
const qr_krec_header *qr_krec_header_of(const qr_krec *k);
size_t qr_krec_conns(const qr_krec *k, const qr_krec_conn **conns);
/* A run of sent segments: count segments of one IP size, hdr of it headers, in sequence order
 * from the previous run's end (the highest sequence number sent so far), or (jump) from sequence
 * number seq (a resend, the record's first). flags: the SYN (0x02), FIN (0x01) and RST (0x04)
 * each segment carries. A segment takes size - hdr bytes of sequence space, one more for SYN and
 * one more for FIN. */
typedef struct qr_krec_run {
    uint64_t count;
    uint32_t size;
    uint8_t jump;
    uint32_t seq;
    uint16_t hdr;
    uint8_t flags;
} qr_krec_run;

/* Walks a connection's runs segment by segment, each with its sequence number. */
typedef struct qr_krec_walk {
    const qr_krec_run *runs;
    size_t n, run;
    uint64_t in_run;
    uint32_t next_seq; /* the highest sequence number sent so far */
    int have_seq;
} qr_krec_walk;

/* One sent segment. */
typedef struct qr_krec_segment {
    uint32_t seq, span; /* its sequence space: [seq, seq + span) */
    uint32_t size;      /* IP bytes */
    uint16_t hdr;
    uint8_t flags;
    uint8_t jump; /* out of sequence (a resend, or the record's first) */
} qr_krec_segment;

/* Starts *w at the first segment of runs[0..n). */
void qr_krec_walk_start(qr_krec_walk *w, const qr_krec_run *runs, size_t n);
/* The next segment into *s; 0 when none is left. */
int qr_krec_walk_next(qr_krec_walk *w, qr_krec_segment *s);

/* An event of a connection: a resend (kind a qr_krec_resend, seq its sequence number), an
 * arrival (kind below; a hole: seq the sequence number expected, bytes missing before the
 * packet that arrived; a duplicate: bytes from seq that had all arrived before, and filled no
 * hole the receiver tracked) or a socket call (kind 0 a send, 1 a receive; bytes what it
 * returned). */
enum { QR_KREC_HOLE = 0, QR_KREC_CE = 1, QR_KREC_ZERO_WINDOW = 2, QR_KREC_DUPLICATE = 3 };
typedef struct qr_krec_event {
    int64_t t_ns;
    uint32_t kind;
    uint32_t seq, bytes;
    int64_t ready_ns; /* a receive call: when its data arrived, at the latest (the last time the
                         bytes received in order grew before it); -1: unknown, or no receive */
} qr_krec_event;

/* Connection c's resends, its arrivals' events and its socket calls, each in time order
 * (borrowed). */
const qr_krec_event *qr_krec_resends(const qr_krec *k, uint32_t c, size_t *n);
const qr_krec_event *qr_krec_arrivals(const qr_krec *k, uint32_t c, size_t *n);
const qr_krec_event *qr_krec_calls(const qr_krec *k, uint32_t c, size_t *n);

/* Connection c's sent segments in send order, as runs (n: how many; borrowed): memory as the
 * file's, whatever the number of packets. */
const qr_krec_run *qr_krec_runs(const qr_krec *k, uint32_t c, size_t *n);
/* Its sampler records at threshold i (borrowed). */
const qr_sample_record *qr_krec_samples(const qr_krec *k, uint32_t c, size_t i, size_t *n);

/* A record against a capture of its host's interface (tcpdump's, the oracle): the packets the
 * record says were handed to the NIC and their payload, the capture's TCP frames sent from an
 * address of the record's connections and theirs. */
typedef struct qr_krec_capture_check {
    uint64_t record_packets, record_payload;
    uint64_t capture_frames, capture_payload;
} qr_krec_capture_check;

/* Read both and count. Returns 0, or a reader's error naming the file. */
int qr_krec_check_capture(const char *record, const char *capture, qr_krec_capture_check *out,
                          char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
