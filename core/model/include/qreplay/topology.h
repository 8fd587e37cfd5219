/* qreplay: the structure of the simulated networks and per-flow ECMP routing (docs/model.md).
 *
 * A k-ary FatTree (k even): k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 core switches,
 * k^3/4 hosts. A star: one switch with n hosts (n <= 63). Switches are numbered edges first
 * (pod p, edge e: p*k/2 + e), then aggregation (k*k/2 + p*k/2 + a), then core (k*k + c).
 * Ports: an edge switch's ports 0..k/2-1 lead down to its hosts, k/2+a up to aggregation a of its
 * pod; an aggregation switch's ports 0..k/2-1 lead down to edge e, k/2+j up to core a*k/2+j; core
 * c's port p leads to pod p (aggregation c / (k/2)). Host h is host h % (k/2) of edge
 * (h / (k/2)) % (k/2) of pod h / (k^3/4 / k) and has address 10.pod.edge.(4*i+2); its switch-side
 * interface is 10.pod.edge.(4*i+1).
 *
 * Routing is O(1) per packet: down by address, up by a hash of the 5-tuple and the switch id, so
 * every packet of a flow direction takes one path, in every run. */
#ifndef QREPLAY_TOPOLOGY_H
#define QREPLAY_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The shape of a network: a k-ary FatTree or hosts on one switch. */
typedef enum { QR_TOPO_FATTREE = 0, QR_TOPO_STAR = 1 } qr_topology_kind;

typedef struct qr_five_tuple {
    uint32_t src_ip, dst_ip; /* host byte order */
    uint16_t src_port, dst_port;
    uint8_t proto;
} qr_five_tuple;

typedef enum { QR_NODE_HOST = 0, QR_NODE_EDGE = 1, QR_NODE_AGG = 2, QR_NODE_CORE = 3 } qr_node_kind;

typedef struct qr_topology qr_topology;

/* A k-ary FatTree, k even in 2..64. Returns 0 or QR_EINVAL. Caller owns *out. */
int qr_topology_fattree(qr_topology **out, int k);

/* A star of n hosts on one switch (kind QR_NODE_EDGE), n in 2..63. Caller owns *out. */
int qr_topology_star(qr_topology **out, int hosts);

/* The topology a scenario's resolved values describe ([topology] kind, k or hosts). Returns as
 * qr_topology_fattree or qr_topology_star. */

/* Release; NULL is allowed. */
void qr_topology_destroy(qr_topology *t);

/* Hosts (k^3/4 for a FatTree, n for the star) and switches (5k^2/4; 1 for the star). */
uint32_t qr_topology_hosts(const qr_topology *t);
uint32_t qr_topology_switches(const qr_topology *t);
/* Ports of switch sw (k for a FatTree switch, n for the star). */
uint32_t qr_topology_ports(const qr_topology *t, uint32_t sw);
qr_node_kind qr_topology_switch_kind(const qr_topology *t, uint32_t sw);

/* Switches on the longest path between two hosts: 5 in a FatTree (edge, aggregation, core,
 * aggregation, edge), 1 on the star. */
uint32_t qr_topology_max_hops(const qr_topology *t);

/* Switches on the path between hosts a and b: 0 for a = b, 1 under one edge switch (and on the
 * star), 3 within a pod, 5 across pods. */
uint32_t qr_topology_hops(const qr_topology *t, uint32_t a, uint32_t b);

/* Bytes every link adds to an IP packet on the wire (the simulated point-to-point links' PPP
 * header). */
#define QR_LINK_OVERHEAD_BYTES 2

/* The time b bytes take on a link of rate_bps as ns-3 computes it (b * 8 / rate in 64.64 fixed
 * point, truncated, times 1e9, rounded half away from zero), ns. */
int64_t qr_link_tx_ns(uint64_t bytes, uint64_t rate_bps);

/* An arrival time that says: deliver the packet at once, whenever it comes (a light record that
 * keeps no receive times for the direction: its packets arrive in order, the regeneration exact).
 */
#define QR_ARRIVE_AT_ONCE INT64_MIN

/* When a packet of ip_bytes must start on a link of rate_bps and delay_ns for its last bit to
 * arrive at arrive_ns (the recorded arrival a corrector reproduces): arrive - its transmission
 * (with the link header) - the delay. A time before now_ns cannot be met: now_ns is returned and
 * *late_ns gets how late (0 when on time). QR_ARRIVE_AT_ONCE: now_ns, never late. */
int64_t qr_link_release_ns(int64_t arrive_ns, uint64_t ip_bytes, uint64_t rate_bps,
                           int64_t delay_ns, int64_t now_ns, int64_t *late_ns);

/* The unloaded latency of a packet of ip_len bytes from host a to host b: on each of the
 * (hops + 1) links, store and forward, its transmission at rate_bps (ns, rounded down) and the
 * propagation delay; from its first bit leaving a to its last bit reaching b. 0 for a = b. */
int64_t qr_unloaded_latency_ns(const qr_topology *t, uint32_t a, uint32_t b, uint32_t ip_len,
                               uint64_t rate_bps, int64_t delay_ns);

/* Host h's address, and the host an address belongs to (QR_ENOTFOUND if none). */
uint32_t qr_topology_host_addr(const qr_topology *t, uint32_t host);
int qr_topology_host_of_addr(const qr_topology *t, uint32_t addr, uint32_t *host);

/* Host h's switch and the port of that switch leading to it. */
void qr_topology_host_attach(const qr_topology *t, uint32_t host, uint32_t *sw, uint32_t *port);

/* What port `port` of switch sw leads to: a host (peer_kind QR_NODE_HOST, peer = host index,
 * peer_port = 0) or a switch (its number and port). Returns 0 or QR_EINVAL. */
int qr_topology_link(const qr_topology *t, uint32_t sw, uint32_t port, qr_node_kind *peer_kind,
                     uint32_t *peer, uint32_t *peer_port);

/* The IPv4 address plan: addr[l] gets the address of the interface where directed link l starts
 * (l < qr_topology_links). A host's uplink starts at the host's address (qr_topology_host_addr,
 * 10.pod.edge.4i+2) and its switch end is the address below it (its /30); switch-to-switch links
 * take the /30 nets 11.0.0.0, 11.0.0.4, ... in the order of (switch, port) of their lower switch,
 * the lower switch's end .1, the higher's .2. Every address is in host byte order. */
void qr_topology_addresses(const qr_topology *t, uint32_t *addr);

/* The ECMP hash of a 5-tuple at switch sw. */
uint64_t qr_flow_hash(const qr_five_tuple *ft, uint32_t sw);

/* The egress port of switch sw for a packet of 5-tuple ft. Returns 0, or QR_ENOTFOUND if the
 * destination is no host of the topology. */
int qr_topology_route(const qr_topology *t, uint32_t sw, const qr_five_tuple *ft, uint32_t *port);

/* Directed links. A cable between two nodes is two links, one per direction. Link ids: first the
 * outgoing direction of every switch port (id = sw * ports + port; every switch of a topology has
 * the same number of ports), then every host's uplink to its switch (id = switches * ports +
 * host). Names: "s3>s9" (switch 3 to switch 9), "s0>h1", "h1>s0". */
uint32_t qr_topology_links(const qr_topology *t);
/* The link leaving switch sw by port `port`, and host h's uplink. */
uint32_t qr_topology_port_link(const qr_topology *t, uint32_t sw, uint32_t port);
uint32_t qr_topology_uplink(const qr_topology *t, uint32_t host);

/* One end of a link: a host (kind QR_NODE_HOST, index = host) or a switch (its kind and number). */
typedef struct qr_node {
    qr_node_kind kind;
    uint32_t index;
} qr_node;

/* Where link id leads: from, to, and the egress port at `from` (0 for a host). The reverse
 * direction, if any (every link has one). Returns 0 or QR_EINVAL (id out of range). */
int qr_topology_link_ends(const qr_topology *t, uint32_t id, qr_node *from, qr_node *to,
                          uint32_t *port);
uint32_t qr_topology_link_reverse(const qr_topology *t, uint32_t id);
/* "s3>s9", "h1>s0"; buf of at least 24 bytes. */
const char *qr_topology_link_name(const qr_topology *t, uint32_t id, char *buf, size_t size);
/* The cable link id belongs to, as 007 and blame name it: its two ends, hosts before switches,
 * then by number ("h3-s0", "s8-s16"); "?" for an id out of range. buf of at least 24 bytes. */
const char *qr_topology_cable_name(const qr_topology *t, uint32_t id, char *buf, size_t size);
/* Switch sw as a node (its kind). */
qr_node qr_topology_switch_node(const qr_topology *t, uint32_t sw);
/* The link from node a to node b: 0, or QR_ENOTFOUND if they are not linked. */
int qr_topology_link_between(const qr_topology *t, qr_node a, qr_node b, uint32_t *id);
/* "h3" or "s9"; buf of at least 12 bytes. */
const char *qr_topology_node_name(qr_node n, char *buf, size_t size);

/* A link named by text: "A>B" (the direction from node A to node B), "A-B" (both directions)
 * or "sS:P" (the direction leaving switch S by port P); nodes are "sN" (switch N) or "hN" (host N).
 * ids[0..*n) get the link(s), n 1 or 2 (for A-B: A>B first). Returns 0, or QR_EVALUE with the
 * reason in errbuf ("no switch s40 (the topology has switches s0-s19)", "s0 and s1 are not linked",
 * "'x3' is not a node (sN or hN)"). */
int qr_topology_link_parse(const qr_topology *t, const char *text, uint32_t ids[2], size_t *n,
                           char *errbuf);

/* The links a packet of 5-tuple ft crosses from host src to its destination, in order: src's
 * uplink, then one per switch (hops + 1 links). At most max are stored, *n gets their number.
 * Returns 0, or QR_EVALUE if the destination is no host or routing does not reach it. */
int qr_topology_path_links(const qr_topology *t, uint32_t src, const qr_five_tuple *ft,
                           uint32_t *links, size_t max, size_t *n);

#ifdef __cplusplus
}
#endif
#endif
