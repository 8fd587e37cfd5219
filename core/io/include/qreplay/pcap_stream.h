/* qreplay: a recording's pcaps streamed for one replay, without reading them whole.
 *
 * recording.h5 is read as qr_recording_open_tables reads it; the pcaps are read as the source
 * (source.h) is asked, one open reader per host, each direction's send times sampled at th_ns
 * with `method` while they are read. A host's packet is released, in injection order (by inferred
 * time; ties in recorded order: the order of plan.h), once no packet not yet read or not yet
 * inferred can come before it: every unread packet of a capture in time order is inferred at or
 * after its recorded time less th (rate) or at or after the open segment's first time (gap), and a
 * segment's record is final once the capture has passed the last time at which the direction's
 * next packet could still join it (qr_sampler_open_until). So memory holds, per host, the packets
 * of the time one open segment spans, not the recording. The records go to a temporary file as
 * the sampler emits them (qr_pcap_stream_end). A capture whose times go back across directions by
 * more than that can hold stops the stream: the source returns QR_EORDER and
 * qr_pcap_stream_unordered is 1; such a recording is read whole (plan.h). The IP IDs, flows and
 * packet counts are checked as qr_recording_open checks them, when read. A stream is read once.
 * The soft limit on open files is raised to hold a reader per host; where the hard limit is too
 * low, QR_ESTATE says so (read whole instead). */
#ifndef QREPLAY_PCAP_STREAM_H
#define QREPLAY_PCAP_STREAM_H

#include <stdint.h>
#include <stdio.h>

#include "qreplay/plan.h"
#include "qreplay/recording.h"
#include "qreplay/sampler.h"
#include "qreplay/source.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qr_pcap_stream qr_pcap_stream;

/* Open dir's recording for streaming at th_ns with `method`. Returns 0, QR_EINVAL (a bad
 * threshold), or qr_recording_open_tables' errors. Caller owns *out (qr_pcap_stream_close). */
int qr_pcap_stream_open(qr_pcap_stream **out, const char *dir, const qr_scenario *check,
                        qr_sampling_method method, int64_t th_ns, char *errbuf);
void qr_pcap_stream_close(qr_pcap_stream *st);

/* The recording's tables (no packets, no receive times; borrowed from st). */
const qr_recording *qr_pcap_stream_recording(const qr_pcap_stream *st);
/* The packets as a source (borrowed from st). */
qr_source *qr_pcap_stream_source(qr_pcap_stream *st);
/* The sampling it was opened with. */
void qr_pcap_stream_sampling(const qr_pcap_stream *st, qr_sampling_method *method, int64_t *th_ns);
/* 1 if the stream stopped at a capture going back in time (read the recording whole instead). */
int qr_pcap_stream_unordered(const qr_pcap_stream *st);
/* After every host's source returned none: the sampling's counts (as qr_plan_sample's) and the
 * records as a temporary file of qr_row_sample_record rows, positioned at its start (borrowed;
 * closed by qr_pcap_stream_close; records of one direction in index order, directions in the
 * order their records were emitted). Returns 0, QR_ESTATE (a host's packets not all taken, or a
 * rate-based inference that missed th), or QR_EIO. */
int qr_pcap_stream_end(qr_pcap_stream *st, qr_sampling_stats *stats, FILE **records, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
