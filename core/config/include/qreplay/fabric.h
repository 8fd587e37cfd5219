/* qreplay: the FatTree testbed's plan (qreplay testbed on a [topology] kind = fattree scenario):
 * which namespaces, veth pairs, addresses, routes and kernel settings make a k-ary FatTree of real
 * Linux hosts and switches, and which nftables rules and shapers plant the scenario's [faults].
 * The testbed's plumbing (testbed/tb_build.c) carries the plan out with ip, tc and nft; the
 * ground truth of a run is fabric_truth.h's.
 *
 * Nodes: host h is namespace h, switch s namespace hosts + s (numbered as topology.h numbers
 * them). Every cable is a veth pair: a host's end is "eth0", a switch's end for port p is "pP".
 * Addresses are topology.h's plan (qr_topology_addresses), every cable a /30, so the testbed's
 * captures, traceroute answers and paths name hosts and interfaces as the simulator does. MAC
 * addresses say whose interface a frame left (qr_fabric_mac): a capture of a switch port taken in
 * both directions tells what arrived from what left by the frame's source address.
 *
 * Routing is Linux's own: a host's default route leads to its edge switch; an edge switch reaches
 * its hosts directly and everything else by a multipath route over its aggregation switches; an
 * aggregation switch reaches each edge switch of its pod by the rack's /24 and everything else by a
 * multipath route over its core switches; a core switch reaches pod q by 10.q.0.0/16 on port q.
 * Each switch hashes the 5-tuple (fib_multipath_hash_policy 3, fields 0x37: addresses, protocol,
 * ports) with its own seed, so a connection takes one path the kernels choose and different
 * switches choose independently. Every switch decrements the TTL and answers an expired one with
 * an ICMP time-exceeded from the interface it arrived on (icmp_errors_use_inbound_ifaddr), under
 * Linux's default ICMP rate limits.
 *
 * Faults ([faults], linkfault.h), with the kernel's own tools:
 *  - gray = LINK P: an nftables netdev rule `numgen random mod 10^6 < P x 10^6 ... drop`;
 *  - blackhole = LINK S: the same rule on a Jenkins hash of the TCP 5-tuple with a seed from
 *    [run] seed, so a fixed share S of the connections (both their probes and their packets) die;
 *  - rate = LINK R: the shaper of the link's sending interface runs at R;
 *  - delay: refused (this kernel has no netem, and nothing else here delays a link).
 * A drop rule sits on the egress hook of the link's sending switch port (after the switch's
 * ingress capture, before its egress capture), or, for a host's uplink, on the ingress hook of the
 * switch port it reaches (a host's capture still shows what its TCP sent, as a real host's would).
 * Each rule counts what it dropped and logs it to its own netfilter log group, which the testbed
 * captures (`tcpdump -i nflog:G`): the truth knows every packet a fault dropped. */
#ifndef QREPLAY_FABRIC_H
#define QREPLAY_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "qreplay/linkfault.h"
#include "qreplay/scenario.h"
#include "qreplay/topology.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The FatTrees a testbed builds: k = 2 or 4 (k=4: 16 hosts, 20 switches, 48 cables). */
#define QR_FABRIC_MAX_K 4
#define QR_FABRIC_MAX_NODES 36
#define QR_FABRIC_MAX_VIA 2 /* k/2: the up ports of an edge or aggregation switch */
#define QR_FABRIC_IFNAME 16

/* One end of a cable. */
typedef struct qr_fabric_end {
    qr_node node;
    uint32_t ns;   /* the node's namespace number */
    uint32_t port; /* a switch's port; 0 for a host */
    char ifname[QR_FABRIC_IFNAME];
    uint8_t mac[6];
    uint32_t addr; /* IPv4, host byte order; the cable is a /30 */
} qr_fabric_end;

/* A cable: two ends and the directed links a->b and b->a (topology.h ids). */
typedef struct qr_fabric_cable {
    qr_fabric_end a, b;
    uint32_t link_ab, link_ba;
} qr_fabric_cable;

/* A route of one namespace: prefix/plen via one or more next hops (a multipath route when more). */
typedef struct qr_fabric_route {
    uint32_t ns;
    uint32_t prefix; /* 0 with plen 0: the default route */
    uint8_t plen;
    uint32_t n_via;
    uint32_t via[QR_FABRIC_MAX_VIA];
    char dev[QR_FABRIC_MAX_VIA][QR_FABRIC_IFNAME];
} qr_fabric_route;

/* A fault's rule: a drop rule (gray, blackhole) on one interface's hook, or a shaper's rate. */
typedef enum { QR_FABRIC_HOOK_EGRESS = 0, QR_FABRIC_HOOK_INGRESS = 1 } qr_fabric_hook;

typedef struct qr_fabric_fault {
    uint32_t fault; /* from 1, in qr_link_faults order (truth.h5 /link_faults) */
    qr_link_fault_kind kind;
    uint32_t link; /* the directed link */
    uint32_t ns;   /* where the rule or shaper is */
    char dev[QR_FABRIC_IFNAME];
    qr_fabric_hook hook;
    uint32_t group;     /* its netfilter log group (drop rules), from 1 */
    uint32_t threshold; /* drops when the draw mod 10^6 is below it */
    uint32_t hash_seed; /* blackhole: the hash's seed */
    uint8_t by_addr;    /* blackhole: on the addresses alone (linkfault.h) */
    uint64_t rate_bps;  /* rate: the shaper's */
} qr_fabric_fault;

typedef struct qr_fabric qr_fabric;

/* The plan of the testbed for c: a FatTree of k <= QR_FABRIC_MAX_K, its faults resolved against
 * it (qr_link_faults_create: same rules, same errors). Returns 0, QR_EVALUE (another topology, a
 * larger k, a fault rule the topology does not have, a delay fault: "[faults] delay: ...") with the
 * reason in errbuf, or QR_ENOMEM. Caller owns *out (qr_fabric_destroy). */
int qr_fabric_plan(const qr_config *c, qr_fabric **out, char *errbuf);
void qr_fabric_destroy(qr_fabric *f);

/* The fat tree (borrowed for f's life), its hosts and its switches. */
const qr_topology *qr_fabric_topology(const qr_fabric *f);
/* Hosts: k^3/4. */
uint32_t qr_fabric_hosts(const qr_fabric *f);
/* Switches: 5k^2/4. */
uint32_t qr_fabric_switches(const qr_fabric *f);
/* Namespaces: hosts then switches. Its short name ("h3", "s12") into buf (at least 12 bytes). */
uint32_t qr_fabric_namespaces(const qr_fabric *f);
const char *qr_fabric_ns_name(const qr_fabric *f, uint32_t ns, char *buf, size_t size);
/* The namespace of switch sw. */
uint32_t qr_fabric_switch_ns(const qr_fabric *f, uint32_t sw);

/* Every cable: hosts' uplinks and switch-to-switch cables (borrowed). */
const qr_fabric_cable *qr_fabric_cables(const qr_fabric *f, size_t *n);
/* Every namespace's routes, namespace by namespace. */
const qr_fabric_route *qr_fabric_routes(const qr_fabric *f, size_t *n);
const qr_fabric_fault *qr_fabric_faults(const qr_fabric *f, size_t *n);
/* The link faults the plan resolved (NULL if none): for truth.h5 /link_faults. */
const qr_link_faults *qr_fabric_link_faults(const qr_fabric *f);

/* The ECMP hash seed of switch sw's namespace (fib_multipath_hash_seed), from [run] seed. */
uint32_t qr_fabric_hash_seed(const qr_fabric *f, uint32_t sw);

/* The MAC address of a node's interface: 02:00:00:00:HH:HH for host H, 02:01:00:SS:SS:PP for
 * port P of switch S. qr_fabric_mac_owner reads one back: 1 with the node and port, 0 if the
 * address is none of the testbed's. */
void qr_fabric_mac(qr_node n, uint32_t port, uint8_t mac[6]);
int qr_fabric_mac_owner(const uint8_t mac[6], qr_node *n, uint32_t *port);

/* The nftables ruleset of namespace ns (every drop rule of its interfaces, as `nft -f` reads it)
 * into buf: "" when the namespace has none. Returns the length, or QR_EINVAL if buf is too small.
 */
int qr_fabric_nft_ruleset(const qr_fabric *f, uint32_t ns, char *buf, size_t size);

/* The shaper rate of an interface: [links] rate, or a rate fault's. */
uint64_t qr_fabric_rate(const qr_fabric *f, uint32_t ns, const char *dev);

/* Routing check, without a kernel: whether every host reaches every other host along the plan's
 * routes (longest prefix first, connected /30s before them) whatever next hop each multipath
 * route picks, within the topology's longest path. Returns 0, or QR_EVALUE naming the first pair
 * and hop that fails (a test's oracle of the plan). */
int qr_fabric_check_routes(const qr_fabric *f, char *errbuf);

#ifdef __cplusplus
}
#endif
#endif
