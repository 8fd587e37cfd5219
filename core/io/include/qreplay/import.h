/* qreplay: turning operators' captures into recordings (qreplay import): which host each capture
 * and each address belongs to. */
#ifndef QREPLAY_IMPORT_H
#define QREPLAY_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/capture.h"
#include "qreplay/clock.h"
#include "qreplay/common.h"
#include "qreplay/recording.h"
#include "qreplay/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One line of a host map. */
typedef struct qr_host_map_entry {
    uint8_t addr[16];   /* IPv4-mapped for IPv4 (capture.h) */
    uint32_t host;      /* host of the scenario's topology */
    char capture[1024]; /* "" or the capture file the line names (as written) */
    long line;          /* where it was given */
} qr_host_map_entry;

/* Read a host map: a CSV with one address per line, `address,host[,capture]` (IPv4 or IPv6
 * address, host number in [0, n_hosts), optionally the capture file taken on that host); an
 * optional header line whose first field is `address`; blank lines and lines starting with '#'
 * are ignored. Returns 0 with *out (caller owns it: qr_host_map_free) and *n, or QR_ENOENT,
 * QR_ESYNTAX / QR_EVALUE / QR_EDUP with "FILE:LINE: ..." naming the field (a bad address, a host
 * that is not a number or not in the topology, an address or a host given twice, a missing or
 * extra field).
 */
int qr_host_map_read(const char *path, uint32_t n_hosts, qr_host_map_entry **out, size_t *n,
                     char *errbuf);

/* Every capture a map (read from map_path) names must be one of captures[0..n_captures) (by file
 * name, the folder aside). Returns 0 or QR_EVALUE with "MAP:LINE: capture NAME was not given". */
int qr_host_map_check_captures(const qr_host_map_entry *map, size_t n, const char *map_path,
                               const char *const *captures, size_t n_captures, char *errbuf);
/* Release; NULL is allowed. */
void qr_host_map_free(qr_host_map_entry *map);

/* Parse an IPv4 (into its IPv4-mapped form) or IPv6 address. Returns 0 or QR_EVALUE. */
int qr_addr_parse(const char *text, uint8_t out[16]);

/* Whose capture it is, when no host map says: the address taking part in the most of its TCP
 * packets (a host's capture holds only its own connections, so its address is in every packet,
 * whoever sends more). When two addresses take part in equally many packets (a capture of one
 * peer only), the handshakes' timing decides: at the client the SYN-ACK comes a round trip after
 * the SYN and the ACK leaves at once, at the server the reverse (one gap at least 4 times the
 * other, or the handshake does not tell); the address more handshakes put the capture at wins, then
 * the one that sent more. When neither tells (no handshake, or as many each way), the capture
 * cannot tell: that is an error asking for a host map. *sent gets the owner's packets sent, *stats
 * the capture's counts (both may be NULL). Returns 0, a qr_capture_open or qr_capture_next error,
 * QR_ENOTFOUND for a capture without a TCP packet ("FILE: no TCP packet in N frames: ..." with the
 * skip counts), or QR_EVALUE for an ambiguous one ("FILE: cannot tell whose capture it is: ...").
 */
int qr_capture_owner(const char *path, uint8_t addr[16], uint64_t *sent, qr_capture_stats *stats,
                     char *errbuf);

/* Why a host's packets are read from a capture (qr_import_scan). */
typedef enum {
    QR_VANTAGE_NONE = 0, /* no capture holds it in view */
    QR_VANTAGE_MAP,      /* the host map names the capture as its */
    QR_VANTAGE_PACKETS,  /* it takes part in the most of the capture's packets (qr_capture_owner) */
    QR_VANTAGE_TIMING,   /* a router's or mirror's capture: its connections' timing puts the
                            capture next to it */
    QR_VANTAGE_COUNT
} qr_import_vantage;

/* A TCP connection found in the captures. Side 0 is the initiator (the sender of its SYN, or, when
 * the capture starts mid-connection, of the first packet seen); side 1 the responder. */
typedef struct qr_import_conn {
    uint8_t addr[2][16];
    uint16_t port[2];
    uint8_t family;       /* 4 or 6 */
    uint8_t syn;          /* the initiator's SYN was captured */
    uint8_t fin[2];       /* a FIN from that side was captured */
    int64_t first_ns;     /* its first packet, on the clock of the first capture that saw it */
    int64_t own_first_ns; /* the initiator's first packet in the initiator's own capture
                             (INT64_MAX: not captured there) */
    uint32_t capture;     /* that capture's index */
    uint64_t packets[2];  /* captured packets sent by each side, as captured (no TSO split) */
    uint64_t bytes[2]; /* stream bytes each side sent: its sequence range, SYN and FIN excluded */
    /* IPv4: the steps from each side's packet to its next, as captured (SYNs and resets aside):
     * rising by 1 to QR_IPID_MAX_GAP, falling by as much (a packet overtaken on the way), other */
    uint64_t id_up[2], id_back[2], id_other[2];
    /* private: sequence tracking */
    uint32_t seq0[2], seq_end[2];
    uint8_t seq_known[2];
} qr_import_conn;

/* What a first pass over the captures found: each capture's host, every connection, the host of
 * every address. */
typedef struct qr_import_scan {
    size_t n_captures;
    uint8_t (*owner)[16];    /* per capture: the address it belongs to */
    uint32_t *owner_host;    /* per capture: its host */
    qr_capture_stats *stats; /* per capture */
    qr_import_conn *conns;   /* by first appearance */
    size_t n_conns;
    uint8_t (*addr)[16]; /* every address of a connection, with its host */
    uint32_t *addr_host;
    size_t n_addrs;
    int64_t *first_ns;    /* per capture: its earliest TCP packet (INT64_MAX: none) */
    char (*warning)[512]; /* per capture: the host map names another address than its packets
                             point to (qr_capture_owner); "" if none */
    /* Every host a capture holds in view, capture by capture: its owner first, then, for a capture
     * taken at a router or a mirror port (connections of several hosts), each address that the
     * timing of a connection the others do not cover puts the capture next to (the handshake's,
     * else each end's quickest turnaround from a segment to its acknowledgment, one at least 4
     * times the other). A connection whose timing cannot tell stays out, counted. */
    size_t n_views;
    uint32_t *view_capture;
    uint8_t (*view_addr)[16];
    uint8_t *view_how; /* qr_import_vantage */
    void *index;       /* private: address -> host */
} qr_import_scan;

/* The first pass: read every capture, find the connections, and give every address a host of the
 * topology (n_hosts): the map's (map may be NULL), else capture owners first, in capture order,
 * then the other addresses of the connections in address order, each the smallest host not yet
 * taken. A capture belongs to the host the map names for its file (the last path component or the
 * whole path as given), else to its owner address (qr_capture_owner). Returns 0 with *out (caller
 * owns it: qr_import_scan_free), or a capture reader's error, QR_ENOTFOUND (a capture without
 * TCP), QR_EVALUE ("N addresses for M hosts: ADDR is the first that does not fit"; a capture
 * whose host the map gives twice), QR_ENOMEM; with the file named in errbuf. */
int qr_import_scan_run(const char *const *captures, size_t n_captures, const qr_host_map_entry *map,
                       size_t n_map, uint32_t n_hosts, qr_import_scan **out, char *errbuf);
/* Release; NULL is allowed. */
void qr_import_scan_free(qr_import_scan *s);
/* The host of an address, or -1. */
int64_t qr_import_scan_host(const qr_import_scan *s, const uint8_t addr[16]);

/* ---- the second pass: a recording from the captures (qreplay import) ----
 *
 * Every capture is read once more, all of them merged in timestamp order. A packet its capture's
 * host sent is split as its NIC sends it (qr_capture_segment at the scenario's link rate, each
 * host's NIC serializing back to back: a packet starts at max(its timestamp, the end of the
 * previous one)) and numbered in its flow direction; a packet the host received is split the same
 * way (GRO-merged segments, ending at the capture time). Connection c becomes flow c of the
 * recording (side 0 -> side 1 its data direction 2c, the other its direction 2c + 1), with the
 * topology's addresses and the runtime's port numbering; IP IDs are the packets' numbers, as in
 * the runtime. Per direction, the evidence of drops is:
 *   both      both ends captured: a sent segment (matched by sequence number and IP ID, or for
 *             IPv6 by sequence number, length and TCP timestamp) that never reaches the
 *             receiver's capture is a drop; /received holds every match's receive time
 *   retrans   only the sender captured: a segment whose data is sent again was lost
 *   ipid      only the receiver captured (IPv4), and
 *   none      only the receiver captured (IPv6): a hole in the sequence numbers that a resend
 *             fills (sent after the segment that opened it: a newer IP ID, where the sender's IDs
 *             rise from packet to packet, or a newer TCP timestamp) was a loss, and one packet is
 *             made up for it with exactly the bytes the resend fills; a hole filled by an older
 *             segment was reordering, one the receiver acknowledged with no filler captured was
 *             missed by the capture, the rest are unknown (all counted). IP ID gaps alone make up
 *             nothing. The sender is reconstructed (send time = receive time - the unloaded path
 *             latency)
 * Times are rebased: recorded time = capture time - the host's applied clock offset - time_base_ns
 * (a reconstructed packet: its receiver's offset). */

/* Duplicated frames are removed over this many previous TCP packets of a capture
 * (qr_capture_dedup: as editcap -D, whose default window is 5, but keeping the same bytes a stack
 * sent twice). */
#define QR_IMPORT_DEDUP_WINDOW 5

/* The largest rise from one IP ID to the next that still counts as the IDs rising (a sender whose
 * IDs rise orders its packets by them). */
#define QR_IPID_MAX_GAP 1024

typedef enum {
    QR_IMPORT_CLOCK_AUTO = 0,  /* reconcile when some pair of hosts was captured at both ends */
    QR_IMPORT_CLOCK_RECONCILE, /* reconcile; an error if no pair was captured at both ends */
    QR_IMPORT_CLOCK_NONE,      /* keep every capture's own clock */
} qr_import_clock;

/* How each direction's drops were known (the table above): qr_import_evidence, in schema.h. */

/* Why a TCP packet the first pass kept did not become part of the recording. */
typedef enum {
    QR_IMPORT_LEFT_SAME_HOST = 0, /* both ends of its connection are one host */
    QR_IMPORT_LEFT_NOT_OWNER,     /* neither sent nor received by a host its capture holds in
                                     view (a mirror's connection whose timing cannot tell) */
    QR_IMPORT_LEFT_DUPLICATE,     /* a host in its capture's view is read from another capture */
    QR_IMPORT_LEFT_COUNT
} qr_import_left;
/* The name of a qr_import_left reason ("same host at both ends", ...; "?" out of range); static
 * storage. */
const char *qr_import_left_name(int r);

/* The NIC rate of a host in a network qreplay does not know (import without --network
 * scenario): GSO/TSO bursts are split and serialized at it, or at the scenario's rate if
 * faster, so the captures' own times stay the clock. */
#define QR_IMPORT_UNKNOWN_NIC_BPS 400000000000ull

typedef struct qr_import_cfg {
    const char *const *captures;
    size_t n_captures;
    const qr_host_map_entry *map; /* may be NULL */
    size_t n_map;
    qr_import_clock clock;
    qr_progress_fn progress; /* may be NULL; called every 2^16 packets; non-zero stops */
    void *progress_ctx;
    int network_known; /* the captures were taken in the scenario's network (the testbed, an
                        * export of a run): its paths and rates are the packets' own */
    const char *paths; /* a path file (qr_import_paths_read) for the recording's /paths; NULL */
    /* the switches' own ICMP counters (recording.h5 /icmp: a testbed's, from each switch's
     * /proc/net/snmp); NULL: none known */
    const qr_row_icmp *icmp;
    size_t n_icmp;
} qr_import_cfg;

/* What an import did, for its summary and the /import group. */
typedef struct qr_import_capture_report {
    char path[1024];
    uint32_t host;
    char owner[QR_ADDR_TEXT_MAX];
    char link[32];
    uint64_t size_bytes;
    char sha256[65];
    qr_capture_stats stats;
    uint64_t sent, received; /* TCP packets its host sent and received, as captured */
    uint64_t left[QR_IMPORT_LEFT_COUNT];
    uint64_t clamped;   /* sent packets whose timestamp went back: moved later */
    char warning[1100]; /* e.g. a cut last record; "" if none */
} qr_import_capture_report;

/* How a sender numbers the IP IDs of its IPv4 packets, read from every one of them the captures
 * hold (SYNs and resets aside: many stacks send those with ID 0). The import orders a receiver-only
 * direction's packets by rising IDs (per connection or per host alike); the kind is reported so
 * that a reader knows what the IDs could say. */
typedef enum {
    QR_IPID_UNKNOWN = 0, /* fewer than 3 steps from one packet to the next (or IPv6 only) */
    QR_IPID_PER_CONN,    /* each connection its own counter (Linux) */
    QR_IPID_PER_HOST,    /* one counter for all its connections (Windows, many appliances) */
    QR_IPID_RANDOM,      /* no order (OpenBSD, some firewalls) */
    QR_IPID_ZERO,        /* always 0 (DF set, no counter) */
    QR_IPID_CONSTANT,    /* always one other value */
    QR_IPID_MIXED,       /* none of these over 90% of its steps */
    QR_IPID_KINDS
} qr_ipid_kind;
/* "unknown", "per connection", "one counter per host", "random", "zero", "constant", "mixed";
 * "?" out of range. Static storage. */
const char *qr_ipid_kind_name(int k);

/* The steps from one packet of a sender to its next: within a connection's direction (steps),
 * and over all its connections in capture time order (host_steps). A step rises when the ID grows
 * by 1 to QR_IPID_MAX_GAP; it is "one" when it grows by no more than the packets the previous
 * frame can hold (1, or a TSO/GRO frame's count at the smallest MSS, 536 bytes). */
typedef struct qr_ipid_stats {
    uint64_t steps, same, one, up; /* up: the rising steps that are not "one" */
    uint64_t host_steps, host_up;  /* host_up: rising, "one" or not */
    uint64_t directions;           /* connection directions with a step */
    uint8_t nonzero;               /* some ID was not 0 */
} qr_ipid_stats;
/* The kind: constant/zero when every step keeps the ID; per connection or per host when 90% of
 * steps rise (with two directions or more, by whether the IDs also rise over the host's
 * connections merged in time; with one, by whether 90% of the steps are "one"); random when under
 * half rise; else mixed. */
qr_ipid_kind qr_ipid_classify(const qr_ipid_stats *s);

typedef struct qr_import_host_report {
    uint32_t host;
    uint8_t captured;            /* a capture of this host was read */
    int32_t capture;             /* the capture its packets are read from, -1: none */
    uint8_t vantage;             /* why that one (qr_import_vantage) */
    uint8_t reconstructed;       /* it sent packets known only from its peers' captures */
    char addr[QR_ADDR_TEXT_MAX]; /* its first address in the captures ("" if none) */
    uint64_t packets, bytes;     /* in its recorded pcap */
    uint64_t reconstructed_packets;
    qr_clock_estimate clock;
    int64_t clock_applied_ns; /* its offset subtracted from its times (0 with --clock none) */
    qr_ipid_stats ipid;       /* the IP IDs it sent, as captured */
    uint8_t ipid_kind;        /* qr_ipid_kind */
} qr_import_host_report;

typedef struct qr_import_report {
    size_t n_captures;
    qr_import_capture_report *captures;
    uint32_t n_hosts;
    qr_import_host_report *hosts;
    size_t connections;
    uint64_t packets;   /* segments in the recording, over all hosts */
    uint64_t tso_split; /* captured packets above the MTU split into segments */
    uint64_t directions[QR_EVIDENCE_COUNT];
    uint64_t drops[QR_EVIDENCE_COUNT];
    uint64_t received;           /* matched receive times (/received rows) */
    uint64_t unmatched_received; /* received segments no sent segment matched */
    uint64_t unknown_tail;       /* sent after the receiver's capture ended: fate unknown */
    uint64_t hole_reordered;     /* receiver only: holes filled by a segment sent before the one
                                    that opened them (reordered on the way, not lost) */
    uint64_t hole_not_captured;  /* receiver only: holes the receiver acknowledged with no filler
                                    captured: they arrived and the capture missed them */
    uint64_t hole_unknown;       /* receiver only: holes filled by a segment whose IP ID and
                                    timestamp cannot tell a resend from a late original, or still
                                    open at the capture's end */
    uint64_t overtaken;          /* both ends captured: segments that arrived after one sent
                                    later (reordered on the way, not lost) */
    uint64_t paths;              /* path-file lines read (directions given a path) */
    uint64_t paths_unmatched;    /* of them, lines naming no captured connection */
    int clock_applied;           /* reconciled offsets were applied */
    size_t clock_pairs;          /* pairs of hosts captured at both ends */
    int64_t time_base_ns;
} qr_import_report;

/* Release a report; NULL is allowed. */
void qr_import_report_free(qr_import_report *r);

/* One line of a path file: a direction of a connection by its captured endpoints, and the links
 * its packets cross, as the user's own traceroutes (or a map of the network) name them. */
#define QR_IMPORT_PATH_MAX 32
typedef struct qr_import_path {
    uint8_t src[16], dst[16]; /* as qr_addr_parse */
    uint16_t sport, dport;
    uint32_t n_links;
    char links[QR_IMPORT_PATH_MAX][48]; /* "" unknown (written "*") */
    long line;
} qr_import_path;
/* Read a path file: one direction per line, "SRC SPORT DST DPORT LINK LINK ...", fields separated
 * by blanks, a link "*" where it is unknown (a hop that did not answer), '#' to the end of a line
 * a comment, blank lines ignored. Links are names of the user's choosing (up to 47 bytes, no
 * blanks), at most QR_IMPORT_PATH_MAX per line. Returns 0 with *out (caller frees) and *n, or
 * QR_ENOENT, QR_ESYNTAX / QR_EVALUE with "FILE:LINE: ..." naming the field. */
int qr_import_paths_read(const char *path, qr_import_path **out, size_t *n, char *errbuf);

/* Import: write the recording folder rec_dir (recording.h5 with the scenario, /flows, /hosts,
 * /drops_detected, /received and /import; pcap/hNNNN.pcap for every host of the topology) from
 * the captures. Everything is written in rec_dir.partial-PID and renamed to rec_dir when complete
 * (an existing rec_dir is replaced only then); on any failure nothing is left. The scenario gives
 * the topology, links.rate and links.delay. Returns 0 with *report (caller owns it:
 * qr_import_report_free; may be NULL), or an error naming the file, frame or host: a capture
 * reader's, QR_ENOTFOUND (no TCP), QR_EVALUE (too many addresses, a host with too many
 * connections, no pair to reconcile with QR_IMPORT_CLOCK_RECONCILE), QR_EIO, QR_ECANCELED. */
int qr_import_run(const qr_import_cfg *cfg, const qr_scenario *s, const char *rec_dir,
                  qr_import_report **report, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
