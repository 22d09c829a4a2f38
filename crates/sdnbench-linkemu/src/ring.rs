//! One veth end read through an AF_PACKET TPACKET_V2 receive ring and written
//! with `send()`.
//!
//! TPACKET_V2 rather than V3: V3 hands frames over a block at a time, and a
//! block that is not full waits for the retire timer (milliseconds), which is
//! delay the emulator would add on its own. V2 hands over every frame at once.
//! Sends bypass the qdisc (PACKET_QDISC_BYPASS) and the socket ignores its own
//! outgoing frames (PACKET_IGNORE_OUTGOING).

use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{fence, Ordering};

const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_VLAN_VALID: u32 = 1 << 4;
const TP_STATUS_VLAN_TPID_VALID: u32 = 1 << 6;

/// Frame slot size: a 1,500-byte MTU frame plus the ring header fits.
pub const FRAME_SIZE: usize = 2048;
/// Bytes of frame data a slot holds after the kernel's header (tp_mac offset).
pub const MAX_FRAME: usize = FRAME_SIZE - 96;

#[repr(C)]
struct Tpacket2Hdr {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_sec: u32,
    tp_nsec: u32,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
    tp_padding: [u8; 4],
}

#[repr(C)]
struct TpacketReq {
    tp_block_size: u32,
    tp_block_nr: u32,
    tp_frame_size: u32,
    tp_frame_nr: u32,
}

/// A received frame as the kernel handed it over.
pub struct Frame<'a> {
    pub data: &'a [u8],
    /// Length on the wire; larger than data when the slot was too small.
    pub wire_len: usize,
    /// Kernel arrival time, CLOCK_REALTIME ns.
    pub rx_realtime_ns: u64,
    /// A VLAN tag the kernel took out of the frame (TPID, TCI), to put back.
    pub vlan: Option<(u16, u16)>,
}

/// An AF_PACKET socket bound to one interface, with its receive ring.
pub struct Ring {
    fd: OwnedFd,
    map: *mut u8,
    map_len: usize,
    frames: usize,
    head: usize,
}

fn setsockopt<T>(fd: RawFd, name: libc::c_int, value: &T) -> io::Result<()> {
    let r = unsafe {
        libc::setsockopt(fd, libc::SOL_PACKET, name, value as *const T as *const libc::c_void, size_of::<T>() as u32)
    };
    if r == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

impl Ring {
    /// Opens interface `ifindex` with a ring of `frames` slots (a multiple of 2).
    pub fn open(ifindex: u32, frames: usize) -> io::Result<Ring> {
        // Protocol 0 receives nothing until bind(): no frame of another interface lands in the ring.
        let raw = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        setsockopt(fd.as_raw_fd(), libc::PACKET_VERSION, &TPACKET_V2)?;
        let req = TpacketReq {
            tp_block_size: (FRAME_SIZE * 2) as u32,
            tp_block_nr: (frames / 2) as u32,
            tp_frame_size: FRAME_SIZE as u32,
            tp_frame_nr: frames as u32,
        };
        setsockopt(fd.as_raw_fd(), libc::PACKET_RX_RING, &req)?;
        setsockopt(fd.as_raw_fd(), libc::PACKET_QDISC_BYPASS, &1i32)?;
        // Kernels before 4.20 lack it; with QDISC_BYPASS our sends are not looped back anyway.
        let _ = setsockopt(fd.as_raw_fd(), libc::PACKET_IGNORE_OUTGOING, &1i32);
        let map_len = FRAME_SIZE * frames;
        let map = unsafe {
            libc::mmap(std::ptr::null_mut(), map_len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED,
                       fd.as_raw_fd(), 0)
        };
        if map == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ring = Ring { fd, map: map as *mut u8, map_len, frames, head: 0 };
        let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex as i32;
        let r = unsafe {
            libc::bind(ring.fd.as_raw_fd(), &sll as *const _ as *const libc::sockaddr, size_of::<libc::sockaddr_ll>() as u32)
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(ring)
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn slot(&self, i: usize) -> *mut Tpacket2Hdr {
        unsafe { self.map.add(i * FRAME_SIZE) as *mut Tpacket2Hdr }
    }

    /// True when a frame waits at the head of the ring.
    pub fn ready(&self) -> bool {
        let status = unsafe { std::ptr::read_volatile(&(*self.slot(self.head)).tp_status) };
        status & TP_STATUS_USER != 0
    }

    /// Hands up to `max` waiting frames to `f`, returning each slot to the kernel after; how many.
    pub fn receive(&mut self, max: usize, mut f: impl FnMut(Frame)) -> usize {
        let mut n = 0;
        while n < max && self.ready() {
            fence(Ordering::Acquire);
            let hdr = self.slot(self.head);
            let h = unsafe { &*hdr };
            let data = unsafe {
                std::slice::from_raw_parts((hdr as *const u8).add(h.tp_mac as usize), h.tp_snaplen as usize)
            };
            let vlan = (h.tp_status & TP_STATUS_VLAN_VALID != 0).then(|| {
                let tpid = if h.tp_status & TP_STATUS_VLAN_TPID_VALID != 0 { h.tp_vlan_tpid } else { 0x8100 };
                (tpid, h.tp_vlan_tci)
            });
            f(Frame {
                data,
                wire_len: h.tp_len as usize,
                rx_realtime_ns: h.tp_sec as u64 * 1_000_000_000 + h.tp_nsec as u64,
                vlan,
            });
            fence(Ordering::Release);
            unsafe { std::ptr::write_volatile(&mut (*hdr).tp_status, TP_STATUS_KERNEL) };
            self.head = (self.head + 1) % self.frames;
            n += 1;
        }
        n
    }

    /// Sends one frame out of this interface; false when the kernel refused it.
    pub fn send(&self, frame: &[u8]) -> bool {
        let r = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
        r == frame.len() as isize
    }

    /// Frames the kernel dropped because the ring was full, since the last call.
    pub fn ring_drops(&self) -> u64 {
        #[repr(C)]
        struct Stats {
            packets: u32,
            drops: u32,
        }
        let mut st = Stats { packets: 0, drops: 0 };
        let mut len = size_of::<Stats>() as u32;
        let r = unsafe {
            libc::getsockopt(self.fd.as_raw_fd(), libc::SOL_PACKET, libc::PACKET_STATISTICS,
                             &mut st as *mut _ as *mut libc::c_void, &mut len)
        };
        if r == 0 { st.drops as u64 } else { 0 }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.map_len) };
    }
}
