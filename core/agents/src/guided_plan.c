/* Where Everflow's guided probes go (guided_plan.h). */
#include "qreplay/guided_plan.h"

#include <stdlib.h>

#include "internal.h"
#include "qreplay/fabric.h"
#include "qreplay/random.h"

int qr_guided_plan(const qr_topology *t, uint32_t paths, uint64_t seed, qr_guided_pin **out,
                   size_t *n)
{
    *out = NULL;
    *n = 0;
    uint32_t hosts = qr_topology_hosts(t);
    if (qr_topology_max_hops(t) != 5 || paths < 1 || paths > QR_GUIDED_MAX_PATHS)
        return QR_EINVAL;
    uint32_t k = 2;
    while (k * k * k / 4 < hosts)
        k += 2;
    uint32_t per_pod = k * k / 4;
    qr_guided_pin *p = malloc((size_t)hosts * paths * sizeof *p);
    if (!p)
        return QR_ENOMEM;
    for (uint32_t h = 0; h < hosts; h++)
        for (uint32_t i = 0; i < paths; i++) {
            uint16_t port;
            int again;
            uint64_t draw = 0;
            do { /* draw until a port this host does not use yet */
                port = (uint16_t)(40000 +
                                  qr_seed_derive(seed, "guided",
                                                 (uint64_t)h << 32 | (uint64_t)i << 16 | draw++) %
                                      20000);
                again = 0;
                for (uint32_t j = 0; j < i; j++)
                    again |= p[(size_t)h * paths + j].sport == port;
            } while (again);
            p[(size_t)h * paths + i] = (qr_guided_pin){h, (h + per_pod) % hosts, port};
        }
    *out = p;
    *n = (size_t)hosts * paths;
    return QR_OK;
}

int qr_bounce_plan(const qr_topology *t, qr_bounce_pin **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    uint32_t links = qr_topology_links(t), sws = qr_topology_switches(t);
    uint32_t *addr = malloc((links ? links : 1) * sizeof *addr);
    qr_bounce_pin *v = malloc((links ? links : 1) * sizeof *v);
    if (!addr || !v) {
        free(addr);
        free(v);
        return QR_ENOMEM;
    }
    qr_topology_addresses(t, addr);
    size_t m = 0;
    for (uint32_t sw = 0; sw < sws; sw++)
        for (uint32_t p = 0; p < qr_topology_ports(t, sw); p++) {
            qr_node_kind k;
            uint32_t peer, pp;
            if (qr_topology_link(t, sw, p, &k, &peer, &pp) || k == QR_NODE_HOST)
                continue;
            qr_bounce_pin *x = &v[m++];
            *x = (qr_bounce_pin){.sw = sw, .port = p, .peer = peer, .peer_port = pp};
            x->addr = addr[qr_topology_port_link(t, sw, p)];
            qr_fabric_mac(qr_topology_switch_node(t, sw), p, x->mac);
            qr_fabric_mac(qr_topology_switch_node(t, peer), pp, x->peer_mac);
        }
    free(addr);
    *out = v;
    *n = m;
    return QR_OK;
}

const qr_bounce_pin *qr_bounce_pin_of(const qr_bounce_pin *pins, size_t n, uint32_t addr)
{
    for (size_t i = 0; i < n; i++)
        if (pins[i].addr == addr)
            return &pins[i];
    return NULL;
}

int qr_bounce_at(const qr_bounce_pin *pins, size_t n, uint32_t sw, uint32_t src, uint32_t dst,
                 uint32_t *port)
{
    const qr_bounce_pin *x = src == dst ? qr_bounce_pin_of(pins, n, dst) : NULL;
    if (x && x->peer == sw) {
        *port = x->peer_port;
        return QR_BOUNCE_BACK;
    }
    if (x && x->sw == sw) {
        *port = x->port;
        return QR_BOUNCE_HOME;
    }
    return QR_BOUNCE_NONE;
}

int qr_debug_dir(int every, uint32_t dir)
{
    return every > 0 && !qr_dir_is_ack(dir) && qr_dir_flow(dir) % (uint32_t)every == 0;
}
