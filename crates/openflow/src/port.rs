//! Switch-description bodies: ports, FEATURES_REPLY, SWITCH_CONFIG,
//! PORT_STATUS, in their 1.0 and 1.3 layouts.

use crate::wire::{Put, Reader};
use crate::{DecodeError, OFP10};

/// A physical port (ofp_phy_port in 1.0, ofp_port in 1.3).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Port {
    pub port_no: u32,
    pub hw_addr: [u8; 6],
    pub name: [u8; 16],
    pub config: u32,
    pub state: u32,
    pub curr: u32,
    pub advertised: u32,
    pub supported: u32,
    pub peer: u32,
    /// Kbit/s; 1.3 only.
    pub curr_speed: u32,
    pub max_speed: u32,
}

impl Port {
    /// Encoded size of one port in `version`'s layout.
    pub fn wire_len(version: u8) -> usize {
        if version == OFP10 { 48 } else { 64 }
    }

    /// A copper 1 Gbit/s port named `name` with a locally administered MAC.
    pub fn emulated(port_no: u32, dpid: u64, name: &str) -> Port {
        let mut n = [0u8; 16];
        let b = name.as_bytes();
        n[..b.len().min(15)].copy_from_slice(&b[..b.len().min(15)]);
        let d = dpid.to_be_bytes();
        Port {
            port_no,
            hw_addr: [0x02, d[5], d[6], d[7], (port_no >> 8) as u8, port_no as u8],
            name: n,
            curr: 0x20 | 0x800, // 1GB_FD | COPPER (same bits in 1.0 and 1.3)
            advertised: 0x20 | 0x800,
            supported: 0x20 | 0x800,
            curr_speed: 1_000_000,
            max_speed: 1_000_000,
            ..Port::default()
        }
    }

    pub fn decode(version: u8, r: &mut Reader) -> Result<Port, DecodeError> {
        let mut p = Port::default();
        if version == OFP10 {
            p.port_no = r.u16()? as u32;
            p.hw_addr = r.array()?;
        } else {
            p.port_no = r.u32()?;
            r.skip(4)?;
            p.hw_addr = r.array()?;
            r.skip(2)?;
        }
        p.name = r.array()?;
        p.config = r.u32()?;
        p.state = r.u32()?;
        p.curr = r.u32()?;
        p.advertised = r.u32()?;
        p.supported = r.u32()?;
        p.peer = r.u32()?;
        if version != OFP10 {
            p.curr_speed = r.u32()?;
            p.max_speed = r.u32()?;
        }
        Ok(p)
    }

    pub fn encode(&self, version: u8, out: &mut Vec<u8>) {
        if version == OFP10 {
            out.put_u16(self.port_no as u16);
            out.extend_from_slice(&self.hw_addr);
        } else {
            out.put_u32(self.port_no);
            out.put_zeros(4);
            out.extend_from_slice(&self.hw_addr);
            out.put_zeros(2);
        }
        out.extend_from_slice(&self.name);
        for v in [self.config, self.state, self.curr, self.advertised, self.supported, self.peer] {
            out.put_u32(v);
        }
        if version != OFP10 {
            out.put_u32(self.curr_speed);
            out.put_u32(self.max_speed);
        }
    }
}

/// FEATURES_REPLY. `ports` only exists in 1.0 (1.3 moved it to PORT_DESC).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FeaturesReply {
    pub datapath_id: u64,
    pub n_buffers: u32,
    pub n_tables: u8,
    pub auxiliary_id: u8,
    pub capabilities: u32,
    /// `actions` bitmap in 1.0, `reserved` in 1.3.
    pub actions: u32,
    pub ports: Vec<Port>,
}

impl FeaturesReply {
    pub fn decode(version: u8, r: &mut Reader) -> Result<FeaturesReply, DecodeError> {
        let mut f = FeaturesReply { datapath_id: r.u64()?, n_buffers: r.u32()?, n_tables: r.u8()?, ..Default::default() };
        f.auxiliary_id = r.u8()?;
        r.skip(2)?;
        f.capabilities = r.u32()?;
        f.actions = r.u32()?;
        if version == OFP10 {
            if !r.remaining().is_multiple_of(48) {
                return Err(DecodeError::Malformed { what: "features reply", detail: format!("{} port bytes is not a multiple of 48", r.remaining()) });
            }
            while r.remaining() > 0 {
                f.ports.push(Port::decode(version, r)?);
            }
        }
        Ok(f)
    }

    pub fn encode(&self, version: u8, out: &mut Vec<u8>) {
        out.put_u64(self.datapath_id);
        out.put_u32(self.n_buffers);
        out.put_u8(self.n_tables);
        out.put_u8(self.auxiliary_id);
        out.put_zeros(2);
        out.put_u32(self.capabilities);
        out.put_u32(self.actions);
        if version == OFP10 {
            for p in &self.ports {
                p.encode(version, out);
            }
        }
    }
}

/// GET_CONFIG_REPLY and SET_CONFIG body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SwitchConfig {
    pub flags: u16,
    pub miss_send_len: u16,
}

/// PORT_STATUS: a port was added, deleted or modified.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PortStatus {
    pub reason: u8,
    pub port: Port,
}

impl PortStatus {
    pub fn decode(version: u8, r: &mut Reader) -> Result<PortStatus, DecodeError> {
        let reason = r.u8()?;
        r.skip(7)?;
        Ok(PortStatus { reason, port: Port::decode(version, r)? })
    }

    pub fn encode(&self, version: u8, out: &mut Vec<u8>) {
        out.put_u8(self.reason);
        out.put_zeros(7);
        self.port.encode(version, out);
    }
}
