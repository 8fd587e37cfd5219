/* qreplay: a scenario in a result file: written as attributes of the file, read back whole. */
#ifndef QREPLAY_SCENARIO_H5_H
#define QREPLAY_SCENARIO_H5_H

#include "qreplay/h5.h"
#include "qreplay/scenario.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Write the resolved scenario as attributes of object `obj` (e.g. "/") of a result file: one string
 * attribute "section.key" per key, "scenario" (the whole INI text), "seed" and "code_version".
 * Returns 0 or the writer's error. */
int qr_scenario_write_h5(const qr_scenario *s, qr_h5 *f, const char *obj, char *errbuf);

/* Start a result file at path (qr_h5_create: written under a temporary name until qr_h5_commit)
 * with the scenario s (if not NULL) as attributes of "/", the file's "kind" (e.g. "qreplay
 * trace") and "recording_id": the id of the recording it was made from (recording.h's
 * qr_recording_id; for recording.h5, its own), when recording_id is neither NULL nor "". Caller
 * owns *out (qr_h5_commit or qr_h5_abort, also after an error: *out may be set). Returns 0 or the
 * writer's error naming the file. */
int qr_h5_create_result(qr_h5 **out, const char *path, const qr_scenario *s, const char *kind,
                        const char *recording_id, char *errbuf);

/* Whether the result file at path was made from the recording whose id is recording_id: 0 (the
 * same id; or recording_id is "" or NULL: a recording of a qreplay before ids, whose results
 * cannot be told apart), or QR_ESTALE ("PATH was made from another recording than the one beside
 * it" with what to do, fix, e.g. "run qreplay replay DIR again"), or the reader's error. */
int qr_h5_check_recording(const char *path, const char *recording_id, const char *fix,
                          char *errbuf);

/* The scenario stored in a result or recording file (its "scenario" attribute), loaded with
 * relative paths resolved against base_dir; name is what its keys' origins are called (NULL: the
 * file's path). Caller owns *out (qr_scenario_destroy). Returns 0 or an error naming the file. */
int qr_scenario_from_h5(qr_scenario **out, const char *h5_path, const char *name,
                        const char *base_dir, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
