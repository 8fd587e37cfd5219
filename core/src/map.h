/* A hash map from a 128-bit key (two uint64) to a pointer, with deletion: the private index that
 * the metrics use to match packets across runs. Chained, grows at load factor 1. */
#ifndef QREPLAY_MAP_H
#define QREPLAY_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct qri_map_node {
    struct qri_map_node *next;
    uint64_t k1, k2;
    void *value;
} qri_map_node;

typedef struct qri_map {
    qri_map_node **buckets;
    size_t n_buckets; /* a power of two */
    size_t count;
} qri_map;

int qri_map_init(qri_map *m);
/* Frees the nodes; values are the caller's (free them first with qri_map_foreach if needed). */
void qri_map_free(qri_map *m);
void *qri_map_get(const qri_map *m, uint64_t k1, uint64_t k2);
/* Insert a new key (the caller checked it is absent). Returns 0 or QR_ENOMEM. */
int qri_map_put(qri_map *m, uint64_t k1, uint64_t k2, void *value);
/* Remove a key; returns its value or NULL. */
void *qri_map_remove(qri_map *m, uint64_t k1, uint64_t k2);
void qri_map_foreach(const qri_map *m, void (*fn)(uint64_t k1, uint64_t k2, void *value, void *ctx),
                     void *ctx);

#endif
