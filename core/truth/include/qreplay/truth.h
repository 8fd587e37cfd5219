/* qreplay: ground truth, for the runtime that writes it and the scorers that read it; never for an
 * analysis (the build does not let an analysis library link this one).
 *
 *   DIR/recording/truth/truth.h5    the runtime's drops with their reasons, direction counts, the
 *                                   planted faults, the pingmesh probes (qr_truth_write)
 *   qr_truth_carry                  a runtime's truth carried over to an import of its captures
 *   testbed.h                       the truth of a namespace-testbed run (its switch captures) */
#ifndef QREPLAY_TRUTH_H
#define QREPLAY_TRUTH_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/faults.h"
#include "qreplay/linkfault.h"
#include "qreplay/pingmesh.h"
#include "qreplay/recording.h"
#include "qreplay/schema.h"
#include "qreplay/traceroute.h"

#ifdef __cplusplus
extern "C" {
#endif

/* truth/truth.h5: the runtime's ground truth, for scoring only. */
typedef struct qr_truth_info {
    const char *recording_id; /* the recording the truth is of (qr_recording_id); NULL: none */
    qr_end_reason end;
    int64_t sim_end_ns;
    uint64_t events;
    double wall_s;
    uint64_t in_flight_at_end, other_drops, host_queue_drops, unknown_packets;
    const qr_row_fault *faults; /* the [faults] drop rules and what they did (/faults) */
    size_t n_faults;
    const qr_row_link_fault *link_faults; /* [faults] gray, blackhole, delay, rate (/link_faults) */
    size_t n_link_faults;
    int probed;                 /* the run probed ([pingmesh] interval): /probes is written */
    const qr_row_probe *probes; /* the Pingmesh agents' probes (pingmesh.h) */
    size_t n_probes;
    uint64_t trace_fault_drops;  /* traceroute probes and answers a planted fault dropped */
    uint64_t trace_buffer_drops; /* those the switches' buffers dropped */
    /* the paths the directions really took, where a simulator's hash does not say it (the
     * testbed's fabric: the kernels' ECMP): /true_paths, a recording's /paths layout (trace 0) */
    const qr_row_path *true_paths;
    size_t n_true_paths;
    /* the testbed's fabric: how long packets took from their host's capture to their edge
     * switch's (p50, p99; a machine that keeps up takes well under a packet's time): attributes
     * tap_delay_p50_ns, tap_delay_p99_ns when has_tap_delay */
    int has_tap_delay;
    int64_t tap_delay_p50_ns, tap_delay_p99_ns;
    /* the hosts' true clock offsets (what each host's clock reads less true time): /clocks. Only
     * the truth holds them; a recording's hosts do not know them. */
    const qr_row_clock *clocks;
    size_t n_clocks;
} qr_truth_info;

/* Write truth.h5 at path (under a temporary name, renamed when complete): the scenario, info and
 * the tables /drops, /directions, and /faults, /link_faults, /probes, /true_paths when info has
 * them.
 * Returns 0 or the writer's error naming the file. */
int qr_truth_write(const char *path, const qr_scenario *s, const qr_truth_info *info,
                   const qr_row_drop *drops, size_t n_drops, const qr_row_direction *dirs,
                   size_t n_dirs, char *errbuf);

/* What truth.h5 says, read back for a scorer. Rows are owned by the struct (qr_truth_free). */
typedef struct qr_truth {
    qr_row_drop *drops; /* every drop, with its reason and place */
    size_t n_drops;
    qr_row_link_fault *link_faults; /* the planted link faults (none if the run had none) */
    size_t n_link_faults;
    qr_row_probe *probes; /* the Pingmesh probes, with where each lost one died */
    size_t n_probes;
    int probed;              /* the run probed: the file has /probes */
    qr_row_path *true_paths; /* /true_paths (none: the topology's hash routes every direction) */
    size_t n_true_paths;
    int64_t sim_end_ns;
    uint64_t trace_fault_drops, trace_buffer_drops; /* traceroute packets dropped (0: none) */
} qr_truth;

/* Read truth.h5 at path: /drops, /link_faults, /probes and /true_paths where present, the run's
 * end. Caller
 * owns *out (qr_truth_free, also after an error). Returns 0, or the reader's error naming the
 * file (QR_EFORMAT: "not a runtime's truth.h5" when sim_end_ns is missing). */
int qr_truth_read(const char *path, qr_truth *out, char *errbuf);

/* The hosts' true clock offsets of the runtime whose recording is rec_dir (its truth/truth.h5
 * /clocks) into out (n_hosts entries). For a scorer, or for the program to pass where a consumer
 * needs true times and says so (the isolated replay of a simulated run). Returns 0, QR_ENOENT (no
 * truth: an import or a folder without truth/), QR_ENOTFOUND (a truth written before it held
 * the clocks: run the runtime again), QR_EFORMAT (another number of hosts), or the reader's
 * error naming the file. */
int qr_truth_clock_offsets(const char *rec_dir, uint32_t n_hosts, int64_t *out, char *errbuf);
/* Release the rows of t (NULL allowed); *t is zeroed. */
void qr_truth_free(qr_truth *t);

/* The directed links of a network of n_links with a planted fault that drops (gray or
 * blackhole): faulty[link] = 1 for each (the caller's n_links bytes, zeroed first; the other
 * direction of the cable is not marked). Returns how many faults were marked, or -1 with
 * QR_EFORMAT's message in errbuf ("PATH: /link_faults row R: link L out of range") for a fault
 * on a link the network lacks. */
int64_t qr_truth_drop_faults(const qr_truth *t, uint32_t n_links, uint8_t *faulty, const char *path,
                             char *errbuf);

/* What qr_truth_carry carried. */
typedef struct qr_truth_carry_stats {
    uint64_t dirs_mapped;     /* the run's flow directions found among the imported ones */
    uint64_t arrivals, drops; /* carried */
    uint64_t arrivals_left, drops_left; /* of directions the import does not have */
    int64_t shift_ns;                   /* added to every time: onto the import's time base */
} qr_truth_carry_stats;

/* The ground truth of the simulated run in run_rec_dir (qreplay runtime's recording folder with
 * truth/arrivals.qra) carried over to imported_rec_dir, a recording imported from captures
 * exported from that run (qreplay export): the round trip's replays can then be scored against
 * the runtime's queues (qreplay metrics). Every imported connection is matched to the run's flow
 * by its original sender address and port (/import/connections); packet ids, the queues'
 * per-direction contents, drops and direction counts are renamed to the import's numbering, and
 * times moved onto its time base (its reference host's clock, less /import time_base_ns).
 * Writes imported_rec_dir/truth/ whole or not at all. Returns 0, QR_EVALUE (a connection that
 * is no flow of the run), QR_EFORMAT (not an imported recording), or a reader's error. */
int qr_truth_carry(const char *run_rec_dir, const char *imported_rec_dir, qr_truth_carry_stats *st,
                   char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
