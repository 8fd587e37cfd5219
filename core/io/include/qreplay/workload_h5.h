/* qreplay: workload.h5 (qreplay workload), the flows and clocks a scenario generates. */
#ifndef QREPLAY_WORKLOAD_H5_H
#define QREPLAY_WORKLOAD_H5_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/flowtable.h"
#include "qreplay/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write workload.h5 at path (whole or not at all): the scenario s, /flows (flows[0..n), with the
 * attribute offered_load: qr_workload_offered_load) and /clock (each host's clock offset,
 * offsets[0..hosts)). Returns 0 or the writer's error naming the file. */
int qr_workload_write(const char *path, const qr_scenario *s, const qr_flow *flows, size_t n,
                      const int64_t *offsets, uint32_t hosts, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
