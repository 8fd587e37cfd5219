/* A switch port's decision for an arriving packet (switchport.h). */
#include "qreplay/switchport.h"
#include "internal.h"

int qr_ecn_mark(uint64_t queue_bytes, uint64_t bytes, uint64_t threshold_bytes)
{
    return threshold_bytes > 0 && queue_bytes + bytes > threshold_bytes;
}

uint32_t qr_port_flow(const qr_port_packet *p)
{
    if (p->has_dir)
        return p->dir;
    return p->has_tuple ? (uint32_t)qr_flow_hash(&p->ft, 0) : 0;
}

int qr_port_arrive(const qr_port *port, const qr_port_packet *p, qr_decision *decision, int *mark)
{
    *decision = QR_ADMIT;
    *mark = 0;
    if (port->faults && p->has_dir && p->has_tcp &&
        qr_faults_arrive(port->faults, port->sw, p->dir, p->tcp_flags, p->payload_bytes, NULL)) {
        *decision = QR_DROP_FAULT;
        return QR_OK;
    }
    if (port->link_faults && p->has_tuple &&
        qr_link_faults_packet(port->link_faults, port->sw, port->port, &p->ft, NULL)) {
        *decision = QR_DROP_FAULT;
        return QR_OK;
    }
    uint64_t before = qr_buffer_queue(port->buffer, port->port);
    int rc = qr_buffer_admit(port->buffer, port->port, p->bytes, port->mode, p->tagged,
                             port->margin_bytes, decision);
    if (!rc && *decision == QR_ADMIT)
        *mark = qr_ecn_mark(before, p->bytes, port->ecn_threshold_bytes);
    return rc;
}
