/* A scenario in a result file (scenario_h5.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "qreplay/scenario_h5.h"
#include "qreplay/version.h"

int qr_scenario_write_h5(const qr_scenario *s, qr_h5 *f, const char *obj, char *errbuf)
{
    if (!s || !f || !obj)
        return qri_err(errbuf, QR_EINVAL, "scenario: NULL argument");
    int rc = QR_OK;
    for (size_t i = 0; !rc && i < qr_scenario_key_count(); i++) {
        const char *section, *key, *value, *origin, *help;
        char name[96];
        qr_scenario_key(s, i, &section, &key, &value, &origin, &help);
        snprintf(name, sizeof name, "%s.%s", section, key);
        rc = qr_h5_attr_str(f, obj, name, value, errbuf);
    }
    /* the whole scenario as one loadable INI text */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = rc ? NULL : open_memstream(&text, &len);
    if (!rc && !mem)
        rc = qri_err(errbuf, QR_ENOMEM, "scenario: out of memory");
    if (mem) {
        qr_scenario_print(s, mem);
        fclose(mem);
        rc = qr_h5_attr_str(f, obj, "scenario", text, errbuf);
        free(text);
    }
    if (!rc)
        rc = qr_h5_attr_u64(f, obj, "seed", qr_scenario_config(s)->run.seed, errbuf);
    if (!rc)
        rc = qr_h5_attr_str(f, obj, "code_version", qr_version(), errbuf);
    return rc;
}

int qr_scenario_from_h5(qr_scenario **out, const char *h5_path, const char *name,
                        const char *base_dir, char *errbuf)
{
    qr_h5_reader *r = NULL;
    char *text = NULL;
    int rc = qr_h5_open(&r, h5_path, errbuf);
    if (!rc)
        rc = qr_h5_read_attr_str(r, "/", "scenario", &text, errbuf);
    qr_h5_close(r);
    if (rc)
        return rc;
    qr_scenario *s = NULL;
    rc = qr_scenario_create(&s);
    if (!rc)
        rc = qr_scenario_load_string(s, text, name ? name : h5_path, base_dir, errbuf);
    free(text);
    if (rc) {
        qr_scenario_destroy(s);
        return rc;
    }
    *out = s;
    return QR_OK;
}

int qr_h5_create_result(qr_h5 **out, const char *path, const qr_scenario *s, const char *kind,
                        const char *recording_id, char *errbuf)
{
    int rc = qr_h5_create(out, path, errbuf);
    if (rc == QR_OK && s)
        rc = qr_scenario_write_h5(s, *out, "/", errbuf);
    if (rc == QR_OK)
        rc = qr_h5_attr_str(*out, "/", "kind", kind, errbuf);
    if (rc == QR_OK && recording_id && recording_id[0])
        rc = qr_h5_attr_str(*out, "/", "recording_id", recording_id, errbuf);
    return rc;
}

int qr_h5_check_recording(const char *path, const char *recording_id, const char *fix, char *errbuf)
{
    if (!recording_id || !recording_id[0])
        return QR_OK;
    qr_h5_reader *r = NULL;
    char *id = NULL;
    int rc = qr_h5_open(&r, path, errbuf);
    if (rc)
        return rc;
    int missing = qr_h5_read_attr_str(r, "/", "recording_id", &id, NULL) != QR_OK;
    if (missing || strcmp(id, recording_id))
        rc = qri_err(errbuf, QR_ESTALE,
                     "%s was made from %s than the one beside it (recording %s): %s", path,
                     missing ? "an older qreplay's recording" : "another recording", recording_id,
                     fix);
    qr_h5_str_free(id);
    qr_h5_close(r);
    return rc;
}
