/* Scenario reader: any text loads or is refused with a message; what loads prints a scenario that
 * loads back to the same values (also after a --set taken from the input's first line). */
#include <string.h>

#include "fuzz_common.h"
#include "qreplay/error.h"
#include "qreplay/scenario.h"

static int
load(qr_scenario** s, const char* text, char* err)
{
    if (qr_scenario_create(s))
        abort();
    return qr_scenario_load_string(*s, text, "fuzz.ini", "/tmp", err);
}

int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    char* text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    char err[QR_ERRBUF_SIZE] = "";
    qr_scenario* s;
    int rc = load(&s, text, err);
    FUZZ_CHECK(rc == QR_OK || err[0], "an error without a message (rc %d)", rc);
    if (rc == QR_OK)
    {
        char* nl = strchr(text, '\n');
        if (nl && strchr(text, '=') && strchr(text, '=') < nl)
        {
            *nl = '\0'; /* the first line as an override */
            qr_scenario_set(s, text, err);
        }
        char* printed = NULL;
        size_t len = 0;
        FILE* mem = open_memstream(&printed, &len);
        FUZZ_CHECK(qr_scenario_print(s, mem) == QR_OK, "print failed");
        fclose(mem);
        qr_scenario* t;
        int rc2 = load(&t, printed, err);
        FUZZ_CHECK(rc2 == QR_OK, "the printed scenario does not load back: %s\n%s", err, printed);
        FUZZ_CHECK(memcmp(qr_scenario_config(s), qr_scenario_config(t), sizeof(qr_config)) == 0,
                   "the printed scenario loads back to other values:\n%s",
                   printed);
        qr_scenario_destroy(t);
        free(printed);
    }
    qr_scenario_destroy(s);
    free(text);
    return 0;
}
