/*
 * sdnbench l2_learning: an L2 switch whose controller learns MAC addresses
 * from packet-ins (P4_16, v1model, for bmv2 simple_switch_grpc).
 *
 * - MyIngress.smac (exact on the source MAC): a known source does nothing, an
 *   unknown one sends the packet to the controller (CPU_PORT) instead of
 *   forwarding it; the controller learns the port, adds smac and dmac entries
 *   and sends the packet on with a packet-out.
 * - MyIngress.dmac (exact on the destination MAC): forward(port), or on a miss
 *   flood() to multicast group FLOOD_GROUP, whose ports the controller sets.
 *   Egress drops the copy that would leave through the port the packet came
 *   in on, so one group serves every ingress port.
 * - packet_in carries the ingress port to the controller; packet_out carries
 *   the egress port, or a multicast group to replicate to when not 0.
 * - Per-port packet and byte counters at ingress and egress.
 */
#include <core.p4>
#include <v1model.p4>

const bit<9>  CPU_PORT = 255;
const bit<16> FLOOD_GROUP = 1;

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9>  egress_port;
    bit<16> mcast_grp;
    bit<7>  _pad;
}

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata { }

struct headers {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    counter(512, CounterType.packets_and_bytes) ingress_port_counter;

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action flood() {
        standard_metadata.mcast_grp = FLOOD_GROUP;
    }
    action send_to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
        standard_metadata.mcast_grp = 0;
    }
    action count_ingress() {
        ingress_port_counter.count((bit<32>)standard_metadata.ingress_port);
    }
    action do_packet_out() {
        standard_metadata.egress_spec = hdr.packet_out.egress_port;
        standard_metadata.mcast_grp = hdr.packet_out.mcast_grp;
        hdr.packet_out.setInvalid();
    }

    table dmac {
        key = {
            hdr.ethernet.dstAddr: exact;
        }
        actions = {
            forward;
            flood;
            drop;
        }
        default_action = flood();
        size = 4096;
    }
    table smac {
        key = {
            hdr.ethernet.srcAddr: exact;
        }
        actions = {
            send_to_cpu;
            NoAction;
        }
        default_action = send_to_cpu();
        size = 4096;
    }

    apply {
        count_ingress();
        if (hdr.packet_out.isValid()) {
            do_packet_out();
        } else {
            dmac.apply();
            smac.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    counter(512, CounterType.packets_and_bytes) egress_port_counter;

    action send_packet_in() {
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
    }
    action prune() {
        mark_to_drop(standard_metadata);
    }
    action count_egress() {
        egress_port_counter.count((bit<32>)standard_metadata.egress_port);
    }

    apply {
        if (standard_metadata.egress_port == CPU_PORT) {
            send_packet_in();
        } else if (standard_metadata.egress_port == standard_metadata.ingress_port) {
            prune();
        } else {
            count_egress();
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) {
    apply { }
}

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
