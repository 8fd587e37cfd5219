/* qreplay: what a switch egress queue holds: its name (switch, port) and its bytes per flow at
 * the moment a packet arrives (a snapshot), as the runtime, the replays and qdiff see it. */
#ifndef QREPLAY_QUEUE_H
#define QREPLAY_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A switch egress queue: the drop location and the qdiff key. */
typedef struct qr_location {
    uint32_t sw;
    uint32_t port;
} qr_location;

/* Bytes of one flow held in a queue. */
typedef struct qr_flow_bytes {
    uint64_t flow;
    uint64_t bytes;
} qr_flow_bytes;

/* One arrival: packet `packet` reached `queue` at time_ns, which then held `flows` (sorted by
 * flow id, each flow once; flows with 0 bytes may be omitted). Borrowed by the calls below. */
typedef struct qr_snapshot {
    uint64_t packet;
    qr_location queue;
    int64_t time_ns;
    const qr_flow_bytes *flows;
    size_t n_flows;
} qr_snapshot;

#ifdef __cplusplus
}
#endif
#endif
