/* The tables of blame.h5 (qreplay blame) (schema_blame.h). */
#include <stddef.h>

#include "qreplay/schema_blame.h"

#define F(T, m) offsetof(T, m)
#define N(a) (sizeof(a) / sizeof((a)[0]))
#define SCHEMA(kind, T, fields)                                                                    \
    {                                                                                              \
        kind, fields, N(fields), sizeof(T)                                                         \
    }

static const qr_h5_field blame_link_fields[] = {
    {"link", QR_H5_U32, F(qr_row_blame_link, link), 0, "the cable's lower directed link id"},
    {"name", QR_H5_STR, F(qr_row_blame_link, name), QR_LINK_NAME_MAX, "as s8-s16 or h3-s1"},
    {"layer", QR_H5_STR, F(qr_row_blame_link, layer), 12,
     "host-edge, edge-agg or agg-core; traced: a path file's name"},
    {"a", QR_H5_U32, F(qr_row_blame_link, a), 0, "lower end: host (layer host-edge) or switch"},
    {"b", QR_H5_U32, F(qr_row_blame_link, b), 0, "upper end: switch"},
    {"votes", QR_H5_F64, F(qr_row_blame_link, votes), 0, "007: sum of 1/h over voting directions"},
    {"voters", QR_H5_U32, F(qr_row_blame_link, voters), 0, "directions"},
    {"rank", QR_H5_U32, F(qr_row_blame_link, rank), 0, "by votes, from 1 (0: no vote)"},
    {"flagged", QR_H5_U8, F(qr_row_blame_link, flagged), 0, "1: flagged by 007's rule"},
    {"noise", QR_H5_U8, F(qr_row_blame_link, noise), 0,
     "1: flagged on the evidence of one lost packet or none (noise)"},
    {"replay_votes", QR_H5_F64, F(qr_row_blame_link, replay_votes), 0,
     "votes of the losses the replay did not drop"},
    {"replay_voters", QR_H5_U32, F(qr_row_blame_link, replay_voters), 0, "directions"},
    {"replay_rank", QR_H5_U32, F(qr_row_blame_link, replay_rank), 0, "from 1 (0: no vote)"},
    {"replay_flagged", QR_H5_U8, F(qr_row_blame_link, replay_flagged), 0, "1: flagged"},
    {"replay_noise", QR_H5_U8, F(qr_row_blame_link, replay_noise), 0, "1: flagged as noise"},
    {"replay_drops", QR_H5_U64, F(qr_row_blame_link, replay_drops), 0,
     "packets the tagged replay dropped here"},
    {"faulty", QR_H5_U8, F(qr_row_blame_link, faulty), 0, "1: a planted gray or blackhole fault"},
    {"fault_drops", QR_H5_U64, F(qr_row_blame_link, fault_drops), 0, "truth: packets"},
    {"congestion_drops", QR_H5_U64, F(qr_row_blame_link, congestion_drops), 0, "truth: packets"}};
const qr_h5_schema qr_schema_blame_link =
    SCHEMA("blame_link", qr_row_blame_link, blame_link_fields);

static const qr_h5_field blame_conn_fields[] = {
    {"dir", QR_H5_U32, F(qr_row_blame_conn, dir), 0, "flow direction"},
    {"flow", QR_H5_U32, F(qr_row_blame_conn, flow), 0, NULL},
    {"src", QR_H5_U32, F(qr_row_blame_conn, src), 0, "host"},
    {"dst", QR_H5_U32, F(qr_row_blame_conn, dst), 0, "host"},
    {"first_loss_ns", QR_H5_I64, F(qr_row_blame_conn, first_loss_ns), 0,
     "ns, sender's clock: when the first lost packet was sent"},
    {"losses", QR_H5_U32, F(qr_row_blame_conn, losses), 0, "packets the receiver detected lost"},
    {"unexplained", QR_H5_U32, F(qr_row_blame_conn, unexplained), 0,
     "of them, packets the replay did not drop"},
    {"hops", QR_H5_U32, F(qr_row_blame_conn, hops), 0, "links on the traced path"},
    {"known", QR_H5_U32, F(qr_row_blame_conn, known), 0,
     "of them, links known (a hop that did not answer leaves its links unknown; 0: untraced)"},
    {"culprit", QR_H5_STR, F(qr_row_blame_conn, culprit), QR_LINK_NAME_MAX,
     "007: the link on its path with the most votes"},
    {"replay_culprit", QR_H5_STR, F(qr_row_blame_conn, replay_culprit), QR_LINK_NAME_MAX,
     "the same by replay votes (\"\" without)"},
    {"true_link", QR_H5_STR, F(qr_row_blame_conn, true_link), QR_LINK_NAME_MAX,
     "truth: where most of its packets were dropped"},
    {"true_cause", QR_H5_STR, F(qr_row_blame_conn, true_cause), 12,
     "fault, congestion or none (truth)"},
    {"correct", QR_H5_I32, F(qr_row_blame_conn, correct), 0,
     "1 culprit = true_link, 0 not, -1 nothing dropped in truth"},
    {"replay_correct", QR_H5_I32, F(qr_row_blame_conn, replay_correct), 0, "the same, replay"}};
const qr_h5_schema qr_schema_blame_conn =
    SCHEMA("blame_conn", qr_row_blame_conn, blame_conn_fields);

static const qr_h5_field blame_curve_fields[] = {
    {"method", QR_H5_STR, F(qr_row_blame_curve, method), 8, "007 or replay"},
    {"connections", QR_H5_U32, F(qr_row_blame_curve, connections), 0,
     "the first N voting directions"},
    {"fault_rank", QR_H5_U32, F(qr_row_blame_curve, fault_rank), 0,
     "best rank of a faulty link (0: none has a vote)"},
    {"flagged", QR_H5_U32, F(qr_row_blame_curve, flagged), 0, "links"},
    {"true_flagged", QR_H5_U32, F(qr_row_blame_curve, true_flagged), 0, "faulty links flagged"},
    {"precision", QR_H5_F64, F(qr_row_blame_curve, precision), 0,
     "NaN: none flagged, or no fault planted"},
    {"recall", QR_H5_F64, F(qr_row_blame_curve, recall), 0, "NaN: no faulty link"}};
const qr_h5_schema qr_schema_blame_curve =
    SCHEMA("blame_curve", qr_row_blame_curve, blame_curve_fields);

static const qr_h5_field blame_summary_fields[] = {
    {"method", QR_H5_STR, F(qr_row_blame_summary, method), 8, "007 or replay"},
    {"connections", QR_H5_U32, F(qr_row_blame_summary, connections), 0, "voting directions"},
    {"votes", QR_H5_F64, F(qr_row_blame_summary, votes), 0, "all votes cast"},
    {"flagged", QR_H5_U32, F(qr_row_blame_summary, flagged), 0, "links"},
    {"true_flagged", QR_H5_U32, F(qr_row_blame_summary, true_flagged), 0, "faulty links flagged"},
    {"faulty", QR_H5_U32, F(qr_row_blame_summary, faulty), 0, "links with a planted drop fault"},
    {"precision", QR_H5_F64, F(qr_row_blame_summary, precision), 0,
     "NaN: none flagged, or no fault planted"},
    {"recall", QR_H5_F64, F(qr_row_blame_summary, recall), 0, "NaN: no faulty link"},
    {"culprit_accuracy", QR_H5_F64, F(qr_row_blame_summary, culprit_accuracy), 0,
     "share of scored connections whose culprit is right"},
    {"scored", QR_H5_U32, F(qr_row_blame_summary, scored), 0,
     "voting directions with a packet dropped in truth"},
    {"detect_after", QR_H5_U32, F(qr_row_blame_summary, detect_after), 0,
     "connections after which every faulty link stays flagged (0: never)"},
    {"rank1_after", QR_H5_U32, F(qr_row_blame_summary, rank1_after), 0,
     "connections after which a faulty link stays ranked first (0: never)"},
    {"traced", QR_H5_U32, F(qr_row_blame_summary, traced), 0,
     "voting directions whose whole path was traced"},
    {"partial", QR_H5_U32, F(qr_row_blame_summary, partial), 0,
     "voting directions with links of their path unknown (hops that did not answer)"},
    {"untraced", QR_H5_U32, F(qr_row_blame_summary, untraced), 0,
     "voting directions with no path known (cast no vote)"},
    {"noise", QR_H5_U32, F(qr_row_blame_summary, noise), 0,
     "flagged links whose votes, when flagged, came from one lost packet or none"}};
const qr_h5_schema qr_schema_blame_summary =
    SCHEMA("blame_summary", qr_row_blame_summary, blame_summary_fields);

static const qr_h5_field blame_comparator_fields[] = {
    {"method", QR_H5_STR, F(qr_row_blame_comparator, method), 8, "binary, integer, maxcov or tomo"},
    {"status", QR_H5_STR, F(qr_row_blame_comparator, status), 96,
     "optimal, or why the solution is not proven optimal (greedy, time limit)"},
    {"optimal", QR_H5_U8, F(qr_row_blame_comparator, optimal), 0, "1: a proven optimum"},
    {"objective", QR_H5_F64, F(qr_row_blame_comparator, objective), 0,
     "links blamed (binary, greedy) or drops in all (integer)"},
    {"connections", QR_H5_U32, F(qr_row_blame_comparator, connections), 0,
     "failed directions given (007's voters)"},
    {"unexplainable", QR_H5_U32, F(qr_row_blame_comparator, unexplainable), 0,
     "of them, directions with no known link (left out)"},
    {"explained", QR_H5_U32, F(qr_row_blame_comparator, explained), 0,
     "directions crossing a blamed link"},
    {"flagged", QR_H5_U32, F(qr_row_blame_comparator, flagged), 0, "links blamed"},
    {"true_flagged", QR_H5_U32, F(qr_row_blame_comparator, true_flagged), 0,
     "faulty links blamed (truth)"},
    {"faulty", QR_H5_U32, F(qr_row_blame_comparator, faulty), 0, "links with a planted drop fault"},
    {"scored", QR_H5_U32, F(qr_row_blame_comparator, scored), 0,
     "directions with a packet dropped in truth"},
    {"precision", QR_H5_F64, F(qr_row_blame_comparator, precision), 0,
     "NaN: none blamed, or no fault planted"},
    {"recall", QR_H5_F64, F(qr_row_blame_comparator, recall), 0, "NaN: no faulty link"},
    {"culprit_accuracy", QR_H5_F64, F(qr_row_blame_comparator, culprit_accuracy), 0,
     "share of scored directions whose culprit (the blamed link on its path with the highest "
     "value) is right"}};
const qr_h5_schema qr_schema_blame_comparator =
    SCHEMA("blame_comparator", qr_row_blame_comparator, blame_comparator_fields);

static const qr_h5_field blame_blamed_fields[] = {
    {"method", QR_H5_STR, F(qr_row_blame_blamed, method), 8, "the comparator"},
    {"name", QR_H5_STR, F(qr_row_blame_blamed, name), QR_LINK_NAME_MAX, "the link"},
    {"value", QR_H5_F64, F(qr_row_blame_blamed, value), 0,
     "binary 1; integer: its drops; greedy: the step it was taken at (1 first)"}};
const qr_h5_schema qr_schema_blame_blamed =
    SCHEMA("blame_blamed", qr_row_blame_blamed, blame_blamed_fields);

static const qr_h5_field blame_epoch_fields[] = {
    {"method", QR_H5_STR, F(qr_row_blame_epoch, method), 8, "007 or replay"},
    {"epoch", QR_H5_I64, F(qr_row_blame_epoch, epoch), 0, "floor(first loss / epoch)"},
    {"start_ns", QR_H5_I64, F(qr_row_blame_epoch, start_ns), 0, "ns: when the epoch starts"},
    {"voters", QR_H5_U32, F(qr_row_blame_epoch, voters), 0,
     "directions whose first loss falls in it"},
    {"votes", QR_H5_F64, F(qr_row_blame_epoch, votes), 0, "votes they cast"},
    {"flagged", QR_H5_U32, F(qr_row_blame_epoch, flagged), 0, "links the rule flagged on them"},
    {"noise", QR_H5_U32, F(qr_row_blame_epoch, noise), 0, "of them, flagged as noise"},
    {"true_flagged", QR_H5_U32, F(qr_row_blame_epoch, true_flagged), 0,
     "faulty links flagged (truth)"},
    {"faulty", QR_H5_U32, F(qr_row_blame_epoch, faulty), 0, "links with a planted drop fault"},
    {"precision", QR_H5_F64, F(qr_row_blame_epoch, precision), 0,
     "NaN: none flagged, or no fault planted"},
    {"recall", QR_H5_F64, F(qr_row_blame_epoch, recall), 0, "NaN: no faulty link"}};
const qr_h5_schema qr_schema_blame_epoch =
    SCHEMA("blame_epoch", qr_row_blame_epoch, blame_epoch_fields);

static const qr_h5_field blame_epoch_link_fields[] = {
    {"method", QR_H5_STR, F(qr_row_blame_epoch_link, method), 8, "007 or replay"},
    {"epoch", QR_H5_I64, F(qr_row_blame_epoch_link, epoch), 0, "the epoch"},
    {"name", QR_H5_STR, F(qr_row_blame_epoch_link, name), QR_LINK_NAME_MAX, "the link"},
    {"votes", QR_H5_F64, F(qr_row_blame_epoch_link, votes), 0, "its votes in the epoch"},
    {"rank", QR_H5_U32, F(qr_row_blame_epoch_link, rank), 0, "by votes, from 1"},
    {"flagged", QR_H5_U8, F(qr_row_blame_epoch_link, flagged), 0, "1: flagged in the epoch"},
    {"noise", QR_H5_U8, F(qr_row_blame_epoch_link, noise), 0, "1: flagged as noise"}};
const qr_h5_schema qr_schema_blame_epoch_link =
    SCHEMA("blame_epoch_link", qr_row_blame_epoch_link, blame_epoch_link_fields);

const qr_h5_schema *const qr_schemas_blame[] = {
    &qr_schema_blame_link,    &qr_schema_blame_conn,       &qr_schema_blame_curve,
    &qr_schema_blame_summary, &qr_schema_blame_comparator, &qr_schema_blame_blamed,
    &qr_schema_blame_epoch,   &qr_schema_blame_epoch_link, NULL};
