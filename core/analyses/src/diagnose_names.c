/* The diagnosis's names (parts, causes, events, size classes) and its default options
 * (diagnose.h). */
#include <string.h>

#include "qreplay/diagnose.h"

static const char *const part_names[QR_PARTS] = {"handshake", "rto",  "recovery", "receiver",
                                                 "delack",    "app",  "queueing", "sending",
                                                 "tlp",       "loss", "reply"};
static const char *const cause_names[QR_CAUSES] = {"none",
                                                   "handshake-loss",
                                                   "rto",
                                                   "rto-few-dupacks",
                                                   "tail-drop",
                                                   "ack-drop",
                                                   "late-fr",
                                                   "fast-retransmit",
                                                   "congestion",
                                                   "receiver-limit",
                                                   "delack-stall",
                                                   "app-limited",
                                                   "lost-retransmit",
                                                   "tail-loss-probe",
                                                   "rack",
                                                   "loss",
                                                   "unknown"};
static const char *const event_names[QR_EV_KINDS] = {
    "lost",      "rto",         "fast-retransmit", "recovery",    "dupack",
    "syn-again", "delayed-ack", "zero-window",     "blackhole",   "tlp",
    "rack",      "reordered",   "spurious",        "unknown-retx"};
static const char *const class_names[QR_DIAG_CLASSES] = {"<100KB", "100KB-1MB", "1-10MB", ">10MB"};

const char *qr_diag_part_name(qr_diag_part p)
{
    return (unsigned)p < QR_PARTS ? part_names[p] : "?";
}

const char *qr_diag_cause_name(qr_diag_cause c)
{
    return (unsigned)c < QR_CAUSES ? cause_names[c] : "?";
}

const char *qr_diag_event_name(qr_diag_event_kind k)
{
    return (unsigned)k < QR_EV_KINDS ? event_names[k] : "?";
}

const char *qr_diag_class_name(uint32_t c)
{
    return c < QR_DIAG_CLASSES ? class_names[c] : "?";
}

uint32_t qr_diag_class_of(uint64_t bytes)
{
    if (bytes < 100000)
        return 0;
    if (bytes < 1000000)
        return 1;
    if (bytes <= 10000000)
        return 2;
    return 3;
}

void qr_diag_opts_default(qr_diag_opts *o)
{
    memset(o, 0, sizeof *o);
    o->tail = 0.99;
    o->dupthresh = 3;
}
