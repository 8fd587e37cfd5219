/* qreplay: the open-loop replay of a recording, and the variants a run folder holds.
 *
 * A replay has no TCP: every host injects its recorded packets (data and ACKs alike) so that each
 * one's first bit leaves its NIC at its injection time, or as soon as the NIC is free; the packets
 * cross the scenario's network (topology.h: per-flow ECMP, links of one rate and propagation
 * delay) and its output-queued switches, whose egress queues share each switch's buffer and
 * decide with the replay rule (buffer.h: plain or tagged, dynamic or static). Hosts swallow what
 * reaches them. Every switch-queue arrival goes to an arrival log (queuelog.h), every refused
 * packet to the drops.
 *
 * Two engines run a replay:
 *  - qr_replay_native, the discrete-event replay of this library (no ns-3), and
 *  - the ns-3 replay of the qreplay ns-3 module (the reference), through the same function type.
 * They agree arrival by arrival. The native engine models exactly what the ns-3 network does:
 *  - a packet of s bytes (IP length) takes t(s + 2) on a link (a 2-byte PPP header), where t(b)
 *    is ns-3's DataRate::CalculateBytesTxTime (qr_link_tx_ns); it reaches the far end t + delay
 *    after its first bit left; a NIC or port sends its FIFO back to back;
 *  - a host sends max(IP length, the encoded headers) bytes (qr_packet_encode) and never drops;
 *  - within one nanosecond, every departure and injection happens before any arrival at a
 *    switch queue; the packets reaching one switch in that nanosecond join its queues in the
 *    order of their packet ids (qr_same_time_key), switch by switch in the order each switch
 *    first received one;
 *  - a switch decrements the TTL (a packet whose TTL reaches 0 vanishes, as the ns-3 switch drops
 * it) and releases a packet's bytes from its buffer when the packet's last bit has left. */
#ifndef QREPLAY_CORE_REPLAY_H
#define QREPLAY_CORE_REPLAY_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "qreplay/krec_recording.h"
#include "qreplay/light.h"
#include "qreplay/pcap_stream.h"
#include "qreplay/plan.h"
#include "qreplay/recording.h"
#include "qreplay/scenario.h"
#include "qreplay/schema.h"
#include "qreplay/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How one replay runs. */
typedef struct qr_replay_opts {
    qr_drop_mode mode;
    uint64_t margin_bytes;
    const char *arrivals_path; /* write every arrival here (NULL: no log) */
    /* Called about every half second of wall time; non-NULL. */
    void (*progress)(void *ctx, int64_t sim_ns, double wall_s, uint64_t events);
    void *progress_ctx;
    const volatile sig_atomic_t *cancel; /* stop when it becomes non-zero (NULL: never) */
} qr_replay_opts;

/* What one replay did. */
typedef struct qr_replay_out {
    uint64_t events;      /* events the engine processed (its own count) */
    double wall_s;        /* wall time of the run */
    int64_t end_ns;       /* simulated time of the last event */
    int64_t max_late_ns;  /* largest lateness of a first bit against its injection time */
    uint64_t other_drops; /* packets lost anywhere but at an admission decision */
    uint64_t delivered;   /* packets that reached a host */
    uint64_t *sent;       /* per host: packets that left its NIC */
    uint64_t *sent_bytes; /* per host: their bytes (IP length) */
    uint32_t n_hosts;
    qr_row_drop *drops; /* every refused packet, in decision order */
    size_t n_drops;
    uint64_t packet_hops;  /* switch-queue arrivals */
    size_t peak_in_flight; /* packets alive at once, at most */
    int cancelled;
} qr_replay_out;

/* Release what an engine put in out (NULL is allowed); out is zeroed. */
void qr_replay_out_free(qr_replay_out *out);

/* An engine: inject the packets src gives (source.h), host by host in its order, on s's network;
 * rec is the recording they come from (its hosts, flows and id). Fills *out (zeroed first by the
 * caller; qr_replay_out_free releases it, also after an error). Returns 0 (also when cancelled:
 * out->cancelled), or an error with a message naming the file or packet. */
typedef int (*qr_replay_engine)(void *ctx, const qr_scenario *s, const qr_recording *rec,
                                qr_source *src, const qr_replay_opts *opts, qr_replay_out *out,
                                char *errbuf);

/* The native engine (ctx unused). Refuses a network unlike the recording's (QR_EVALUE, before
 * running) and a packet ns-3 would fragment or could not parse (IP length above the links' MTU or
 * below its header: QR_EVALUE naming the host and packet, when it comes to be injected: use the
 * ns-3 engine). */
int qr_replay_native(void *ctx, const qr_scenario *s, const qr_recording *rec, qr_source *src,
                     const qr_replay_opts *opts, qr_replay_out *out, char *errbuf);

/* The longest name a variant may have (a folder name, with room for the file system's limit). */
#define QR_VARIANT_NAME_MAX 200

/* One replay variant of a run folder. */
typedef struct qr_variant_settings {
    qr_drop_mode mode;
    int64_t th_ns;
    const char *name; /* NULL or "": qr_variant_name(mode, th) (+ "_reconciled") */
    int reconcile;    /* take the clock offsets estimated from the recording out of send times */
    const char *engine_name; /* "native" or "ns3": stored in replay.h5 */
    const volatile sig_atomic_t *cancel;
    /* A one-line status, about every half second (may be NULL). */
    void (*status)(void *ctx, const char *line);
    void *status_ctx;
    /* If not NULL: on success, the injection plan the replay ran (plan.h; the input read whole
     * or a light record) is handed back here, for a caller that measures the replay against its
     * injection times (caller frees: qr_plan_free); NULL for a stream. */
    qr_plan **plan_out;
} qr_variant_settings;

/* The study's plan for a scenario (qreplay run, testbed): every [sampling] threshold in order,
 * and at each every [replay] mode that is on, plain before tagged. Fills the mode and threshold
 * of out[0..max) (other fields zero) and returns how many variants the plan has (more than max:
 * only max were written). */
size_t qr_variant_plan(const qr_config *c, qr_variant_settings *out, size_t max);

/* The variant's folder name into buf (size bytes); returns buf. */
const char *qr_variant_settings_name(const qr_variant_settings *v, char *buf, size_t size);

/* What a variant replays, one of:
 *  - rec alone: the observations read whole; its send times are sampled at the variant's
 *    threshold (plan.h), after the estimated clock offsets are taken out with v->reconcile;
 *  - rec and light: rec regenerated from the light record (qr_recording_from_light), whose own
 *    samples give the send times (qr_light_plan; no reconcile);
 *  - stream: the captures streamed, sampled as they are read at the threshold they were opened
 *    with (pcap_stream.h; no reconcile). */
typedef struct qr_replay_input {
    const qr_recording *rec;
    const qr_light *light;
    qr_pcap_stream *stream;
    const qr_krec_set *krec; /* kernel records: rec is their recording (krec_recording.h) */
} qr_replay_input;

/* Replay `in` with `engine` on s's network into run_dir/replay/<name>/: arrivals.qra and
 * replay.h5, both or neither (a run that fails or is cancelled removes what it wrote, and the
 * folder if it made it). The stages run once, top to bottom: clock estimates (v->reconcile: host
 * 0 the reference) -> corrections -> the injection plan (or the stream) -> the engine -> the
 * files. Returns 0, QR_ECANCELED, or an error naming the file (QR_EINVAL: an input unlike the
 * ones above, or a stream opened at another threshold). */
int qr_replay_variant(const char *run_dir, const qr_scenario *s, const qr_replay_input *in,
                      const qr_variant_settings *v, qr_replay_engine engine, void *engine_ctx,
                      char *errbuf);

/* How a replay reads a recording folder's captures: where it can stream (QR_READ_AUTO), streamed
 * (QR_READ_STREAM), or read whole into memory first (QR_READ_WHOLE). */
typedef enum { QR_READ_AUTO = 0, QR_READ_STREAM = 1, QR_READ_WHOLE = 2 } qr_read_mode;

/* Whether the variant's replay streams: only the native engine with the clocks as recorded can
 * (the ns-3 engine and reconciled clocks read whole). *stream gets 1 or 0. Returns 0, or
 * QR_EINVAL when QR_READ_STREAM was asked where it cannot, with the reason. */
int qr_replay_read_streams(qr_read_mode read, const qr_variant_settings *v, int *stream,
                           char *errbuf);

/* The variant's replay of recording folder rec_dir (its captures, read as `read` and
 * qr_replay_read_streams say; check: the scenario the recording must match, qr_recording_open's)
 * with qr_replay_variant. Under QR_READ_AUTO, a capture whose times go back across directions
 * further than a stream holds (qr_pcap_stream_unordered) is read whole and the replay run again;
 * *note (note_size bytes, may be NULL) then says why, else is "". Returns what qr_replay_variant
 * returns, or the reader's error. */
int qr_replay_recording(const char *run_dir, const char *rec_dir, const qr_scenario *s,
                        qr_read_mode read, const qr_variant_settings *v, qr_replay_engine engine,
                        void *engine_ctx, char *note, size_t note_size, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
