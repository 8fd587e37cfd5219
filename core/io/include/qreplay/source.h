/* qreplay: where a replay's packets come from, one host at a time.
 *
 * A source gives each host's packets in injection order, each with the time it is injected at.
 * It is the one interface between a recording and an engine: an engine asks a source for host h's
 * next packet and takes it once injected; it never sees how the source got there. Sources:
 *  - a plan's cursor (plan.h): the observations in memory, sampled into an injection plan;
 *  - a pcap stream (pcap_stream.h): the captures read and sampled as the engine asks.
 * A source module calls nothing above it and nothing calls back into it but its owner. */
#ifndef QREPLAY_SOURCE_H
#define QREPLAY_SOURCE_H

#include <stdint.h>

#include "qreplay/recording.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A packet to inject, and when. */
typedef struct qr_injection {
    const qr_rec_packet *p; /* the recorded packet (NULL: the host has none left) */
    int64_t time_ns;        /* its injection time (the inferred send time; may be negative) */
} qr_injection;

/* When an injection is due: its time, or 0 for one before the replay's start (a send time moved
 * before 0 by sampling or a clock correction). The one rule both engines use. */
static inline int64_t qr_injection_due(const qr_injection *in)
{
    return in->time_ns > 0 ? in->time_ns : 0;
}

typedef struct qr_source qr_source;
struct qr_source {
    /* Host h's next packet in injection order into *out (out->p NULL when none is left), valid
     * until take moves past it; asking again without take gives the same one. Returns 0 or the
     * source's error naming the file and packet. */
    int (*next)(qr_source *self, uint32_t h, qr_injection *out, char *errbuf);
    /* Move past host h's packet that next gave. */
    void (*take)(qr_source *self, uint32_t h);
};

#ifdef __cplusplus
}
#endif
#endif
