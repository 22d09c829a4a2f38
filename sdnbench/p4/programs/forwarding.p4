/*
 * sdnbench forwarding: per-destination forwarding that a topology-aware
 * controller programs proactively (P4_16, v1model, for bmv2 simple_switch_grpc).
 *
 * - MyIngress.dmac (exact on the destination MAC): forward(port) along the
 *   path the controller chose; a miss (broadcast such as ARP, or an unknown
 *   destination) floods to multicast group FLOOD_GROUP, which the controller
 *   sets to the switch's spanning-tree ports and host ports.
 * - Egress drops the copy that would leave through the port the packet came
 *   in on, so flooding over a spanning tree cannot loop or storm even where
 *   the topology has loops (spine-leaf, grid).
 * - Per-port packet and byte counters at ingress and egress.
 */
#include <core.p4>
#include <v1model.p4>

const bit<16> FLOOD_GROUP = 1;

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct metadata { }

struct headers {
    ethernet_t ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
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
    action count_ingress() {
        ingress_port_counter.count((bit<32>)standard_metadata.ingress_port);
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

    apply {
        count_ingress();
        dmac.apply();
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    counter(512, CounterType.packets_and_bytes) egress_port_counter;

    action prune() {
        mark_to_drop(standard_metadata);
    }
    action count_egress() {
        egress_port_counter.count((bit<32>)standard_metadata.egress_port);
    }

    apply {
        if (standard_metadata.egress_port == standard_metadata.ingress_port) {
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
        packet.emit(hdr.ethernet);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
