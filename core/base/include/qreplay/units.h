/* qreplay: strict parsing and printing of values with units.
 *
 * Units are part of every dimensioned value: times (ns, us, ms, s), rates (bps, Kbps, Mbps, Gbps,
 * Tbps; SI multiples), sizes (B, KB, MB, GB as powers of 1000; KiB, MiB, GiB as powers of 1024),
 * percentages (30%) and event rates (2400/s). A value without its unit is an error, with one
 * exception: a bare 0 is accepted for times (it means "none", e.g. exact send times). Results are
 * integers in the base unit (ns, bit/s, bytes); a value that is not a whole number of base units
 * (1.5ns) is an error. */
#ifndef QREPLAY_UNITS_H
#define QREPLAY_UNITS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The maximum transmission unit every metric is reported in (bytes). */
#define QR_MTU_BYTES 1500

/* Parse a time such as "5us", "1.5ms", "0". Returns 0, QR_EUNIT or QR_EVALUE; *out in ns. */
int qr_parse_time_ns(const char *text, int64_t *out, char *errbuf);

/* Parse a link rate such as "10Gbps". Returns 0, QR_EUNIT or QR_EVALUE; *out in bit/s. */
int qr_parse_rate_bps(const char *text, uint64_t *out, char *errbuf);

/* Parse a size such as "2MB", "2MiB", "7500B". Returns 0, QR_EUNIT or QR_EVALUE; *out in bytes. */
int qr_parse_bytes(const char *text, uint64_t *out, char *errbuf);

/* Parse a size that may also be given in MTUs ("5MTU" = 7500 bytes) or bytes. */
int qr_parse_bytes_or_mtu(const char *text, uint64_t *out, char *errbuf);

/* Parse a percentage such as "30%" into a fraction (0.30). Returns 0, QR_EUNIT or QR_EVALUE. */
int qr_parse_percent(const char *text, double *out, char *errbuf);

/* Parse a share in (0, 1) written as a percentage ("0.1%") or a fraction ("0.001"). Returns 0 or
 * QR_EVALUE (no number, trailing text, 0 or below, 1 or above). */
int qr_parse_share(const char *text, double *out, char *errbuf);

/* Parse an event rate such as "2400/s" (or bare "0") into events per second. */
int qr_parse_per_second(const char *text, double *out, char *errbuf);

/* Parse a plain decimal integer in [min, max]. Returns 0 or QR_EVALUE. */
int qr_parse_int(const char *text, int64_t min, int64_t max, int64_t *out, char *errbuf);

/* Parse a plain finite number in [min, max]. Returns 0 or QR_EVALUE. */
int qr_parse_double(const char *text, double min, double max, double *out, char *errbuf);

/* Parse a comma-separated list of times ("2us,5us, 10us"; blanks around items are ignored): each
 * item as qr_parse_time_ns, not negative, none listed twice, at most max items, no empty item.
 * Returns 0, or QR_EVALUE / QR_EUNIT with the item at fault in errbuf ("empty list",
 * "empty item in '...'", "'-1ns' is negative", "'2us' is listed twice", "at most 16 values"). */
int qr_parse_time_list(const char *text, int64_t *out, size_t max, size_t *n, char *errbuf);

/* Parse a comma-separated list of whole numbers, each in [0, max_value], none twice; "what" names
 * the list in messages ("--flows: '7' is not in 0..6"). *out is allocated (caller owns it:
 * qr_index_list_free). Returns 0, QR_EVALUE or QR_ENOMEM. */
int qr_parse_index_list(const char *text, uint64_t max_value, const char *what, uint64_t **out,
                        size_t *n, char *errbuf);
void qr_index_list_free(uint64_t *list);

/* A duration for people to read, rounded to what they compare: "12.345 ms" (|ns| >= 1 ms),
 * "678.000 us" (>= 1 us), else "12 ns"; negative durations keep their sign. Returns buf. */
char *qr_format_duration(int64_t ns, char *buf, size_t size);

/* Format a time in ns with the largest unit that shows it exactly ("5us", "1500ns", "0").
 * Writes at most size bytes including the terminating NUL; returns buf. */
char *qr_format_time(int64_t ns, char *buf, size_t size);

/* Format a rate in bit/s exactly ("10Gbps"). Returns buf. */
char *qr_format_rate(uint64_t bps, char *buf, size_t size);

/* Format a size in bytes exactly, in SI units where exact ("2MB", "393KB", "1500B"). Returns buf.
 */
char *qr_format_bytes(uint64_t bytes, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
