/* qreplay: what a switch queue holds per flow, and the arrival log that records it.
 *
 * qr_queue_flows keeps the bytes of each flow in one queue (added on admission, removed when the
 * packet's last bit leaves) and gives a snapshot sorted by flow id, the input of qdiff.
 *
 * The arrival log is a binary file of every switch-queue arrival of a run: the packet, the queue,
 * the time, the decision taken, the queue's and the switch's bytes and the threshold at that
 * moment, and the queue's contents per flow before the packet joined. The metrics stream it with
 * qr_arrival_reader. docs/FORMATS.md gives the format: the magic "QRARRV4\n", blocks of
 * delta-coded records, and an 80-byte trailer: "QRAEND4\n", the number of records, the id of the
 * recording the arrivals belong to and the run that wrote them (the recorded run, or one replay).
 * A log without its trailer was cut and is refused. Logs of the second and third formats are
 * still read (they name no run); the first format is refused. */
#ifndef QREPLAY_QUEUELOG_H
#define QREPLAY_QUEUELOG_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/queue.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_queue_flows qr_queue_flows;

/* Create an empty queue. Caller owns *out (qr_queue_flows_destroy). Returns 0 or QR_ENOMEM. */
int qr_queue_flows_create(qr_queue_flows **out);
/* Release; NULL is allowed. */
void qr_queue_flows_destroy(qr_queue_flows *q);
/* A packet of `bytes` of `flow` joined the queue. Returns 0 or QR_ENOMEM. */
int qr_queue_flows_add(qr_queue_flows *q, uint64_t flow, uint64_t bytes);
/* A packet left. Returns 0, or QR_ESTATE if the flow holds fewer bytes (nothing changes). */
int qr_queue_flows_remove(qr_queue_flows *q, uint64_t flow, uint64_t bytes);
/* The flows with bytes in the queue, sorted by flow id; borrowed until the next change. */
size_t qr_queue_flows_snapshot(const qr_queue_flows *q, const qr_flow_bytes **flows);
/* Bytes in the queue. */
uint64_t qr_queue_flows_total(const qr_queue_flows *q);

/* One arrival. */
typedef struct qr_arrival {
    uint64_t packet;
    int64_t time_ns;
    uint32_t sw, port;
    uint32_t bytes;   /* the packet's size */
    uint8_t decision; /* a qr_decision */
    uint8_t tagged;   /* carried a drop tag */
    uint16_t n_flows;
    uint64_t queue_bytes;       /* before the packet joined */
    uint64_t total_bytes;       /* the switch's, before the packet joined */
    int64_t threshold;          /* the dynamic threshold at that moment */
    const qr_flow_bytes *flows; /* the queue's contents before the packet joined */
} qr_arrival;

/* Everflow's mirror, an observation file of its own (REC_DIR/QR_MIRROR_COPIES, written by the
 * runtime and the testbeds beside the truth's log): the copies the switches mirror to the
 * analyzer, one per arrival of a recorded packet at a switch port, in the arrival log's format
 * with the run QR_ARRIVALS_MIRROR. A copy holds what the switch itself knows of the arrival: the
 * packet, the time, the port it is headed out of, its size, the switch's own decision (admitted,
 * or dropped by its buffer: threshold, full, tagged, as a mirror-on-drop copy says) and the buffer
 * telemetry it stamps on the copy (the queue's and the switch's bytes and the dynamic threshold
 * before the packet joined). It holds neither the queue's contents per flow nor a drop the switch
 * did not decide: the copy of a packet that a planted fault lost is an admitted one. */
#define QR_ARRIVALS_MIRROR "mirror"
#define QR_MIRROR_COPIES "mirror/copies.qra"
/* The copy a switch mirrors of arrival a (its flows: none). */
void qr_mirror_copy(const qr_arrival *a, qr_arrival *copy);
/* Write the mirror's copies of every arrival of the log at `log` into mirror_path, whole or not at
 * all (a temporary file beside it, renamed when complete; the folder is made). For the testbeds,
 * whose log is put together from the switches' own port captures after the run; the runtime
 * writes its copies as the arrivals happen. Returns 0, the reader's error or QR_EIO. */
int qr_mirror_write_from(const char *log, const char *mirror_path, char *errbuf);

/* The drop row (schema.h) of an arrival that was not admitted. */
struct qr_row_drop;
void qr_drop_row_of(const qr_arrival *a, struct qr_row_drop *row);

typedef struct qr_arrival_writer qr_arrival_writer;
typedef struct qr_arrival_reader qr_arrival_reader;

/* Create (truncate) an arrival log. Returns 0 or QR_EIO with the reason in errbuf. Caller owns
 * *out and must call qr_arrival_writer_close. */
int qr_arrival_writer_open(qr_arrival_writer **out, const char *path, char *errbuf);
/* Append an arrival (flows must be sorted by flow id, at most 65535). Returns 0, QR_EINVAL,
 * QR_EORDER (unsorted flows) or QR_EIO. */
int qr_arrival_write(qr_arrival_writer *w, const qr_arrival *a, char *errbuf);
/* The recording the arrivals belong to (recording.h's qr_recording_id), written in the trailer.
 * Returns 0 or QR_EINVAL (longer than 32 characters). */
int qr_arrival_writer_set_recording(qr_arrival_writer *w, const char *recording_id);
/* The run that wrote the arrivals (at most 32 characters), written in the trailer: the recorded
 * run's own log (truth/arrivals.qra) says QR_ARRIVALS_TRUTH, a replay's log its replay.h5's
 * arrivals_id. Returns 0 or QR_EINVAL. */
#define QR_ARRIVALS_TRUTH "truth"
int qr_arrival_writer_set_source(qr_arrival_writer *w, const char *source);
/* Set the source of a whole log of the fourth format at path (a writer that does not know it
 * when the log is written: a replay engine). Returns 0, QR_EFORMAT or QR_EIO. */
int qr_arrival_log_stamp_source(const char *path, const char *source, char *errbuf);
/* Write the trailer, flush, close and free (NULL is allowed). Returns 0 or QR_EIO. */
int qr_arrival_writer_close(qr_arrival_writer *w, char *errbuf);

/* Open an arrival log. Returns 0, QR_ENOENT, QR_EFORMAT (not an arrival log, or one of the first
 * format) or QR_ETRUNC (no trailer: the log was cut), with the reason. */
int qr_arrival_reader_open(qr_arrival_reader **out, const char *path, char *errbuf);
/* The next arrival; a->flows is borrowed until the next call. Returns 0, QR_END (after the last
 * record, when their number is the trailer's), QR_ETRUNC (a record crosses into the trailer) or
 * QR_EFORMAT (a corrupt record, a count other than the trailer's), naming the record number. */
int qr_arrival_read(qr_arrival_reader *r, qr_arrival *a, char *errbuf);
/* The id of the recording the log belongs to ("" if its writer gave none); borrowed. */
const char *qr_arrival_reader_recording(const qr_arrival_reader *r);
/* The number of records the trailer announces. */
uint64_t qr_arrival_reader_records(const qr_arrival_reader *r);
/* Close and free; NULL is allowed. */
void qr_arrival_reader_close(qr_arrival_reader *r);

/* Whether the arrival log at path belongs to the recording whose id is recording_id: 0 (the same
 * id, or recording_id "" or NULL: a recording of a qreplay before ids), QR_ESTALE ("PATH holds
 * the arrivals of another recording ...: FIX") or the reader's error (a cut or damaged log). */
int qr_arrival_log_check(const char *path, const char *recording_id, const char *fix, char *errbuf);
/* The same, and (source not NULL or "") that the run that wrote it is source: the recorded run's
 * (QR_ARRIVALS_TRUTH) or the replay whose replay.h5 (source_file, named in the message) gives
 * that arrivals_id. A log that names no run (the third format or older, or a writer that gave
 * none) passes. QR_ESTALE names
 * both files and fix. */
int qr_arrival_log_check_source(const char *path, const char *recording_id, const char *source,
                                const char *source_file, const char *fix, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
