/* Error codes (error.h): every code has its own text; unknown codes say so. */
#include <criterion/criterion.h>
#include <string.h>

#include "qreplay/error.h"

Test(error, every_code_has_a_distinct_text)
{
    const char *seen[32] = {0};
    for (int c = QR_ESAMEFILE; c <= QR_END; c++) {
        const char *t = qr_strerror(c);
        cr_assert_not_null(t);
        cr_assert_gt(strlen(t), 0, "code %d", c);
        for (int d = QR_ESAMEFILE; d < c; d++)
            cr_assert_str_neq(t, seen[d - QR_ESAMEFILE], "codes %d and %d share a text", c, d);
        seen[c - QR_ESAMEFILE] = t;
    }
    cr_assert_str_neq(qr_strerror(-999), qr_strerror(QR_EIO), "an unknown code is not a known one");
    cr_assert_not_null(qr_strerror(12345));
}
