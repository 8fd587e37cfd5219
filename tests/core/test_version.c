/* The code version (version.h): the project version, then the build's git description. */
#include <criterion/criterion.h>
#include <string.h>

#include "qreplay/version.h"

Test(version, starts_with_the_project_version)
{
    const char *v = qr_version();
    cr_assert_not_null(v);
    cr_assert(strncmp(v, "0.1.0", 5) == 0, "%s", v);
    cr_assert_eq(qr_version(), v, "static storage: the same string every call");
}
