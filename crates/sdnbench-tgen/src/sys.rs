//! Thin, safe wrappers over the Linux calls the engine needs: the clock, signals,
//! socket options and batched `sendmmsg`/`recvmmsg`.

use std::io;
use std::mem::{size_of, zeroed};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// The clock every probe timestamp uses; named in every output line.
pub const CLOCK_NAME: &str = "CLOCK_REALTIME";

/// Nanoseconds since the epoch on CLOCK_REALTIME. All network namespaces of one
/// kernel read the same clock, so send and receive stamps are directly comparable.
pub fn realtime_ns() -> u64 {
    let mut ts: libc::timespec = unsafe { zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until the absolute CLOCK_REALTIME instant `ns` (returns early on a signal).
pub fn sleep_until(ns: u64) {
    let ts = libc::timespec { tv_sec: (ns / 1_000_000_000) as _, tv_nsec: (ns % 1_000_000_000) as _ };
    unsafe { libc::clock_nanosleep(libc::CLOCK_REALTIME, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
}

/// Shrinks the kernel's timer slack (default 50 µs) so short sleeps wake on time.
pub fn tight_timer_slack() {
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// SIGINT/SIGTERM make the run stop cleanly and still print its summary.
pub fn install_stop_handler() {
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

/// True once SIGINT or SIGTERM arrived.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// This kernel's boot id (16 bytes): equal on sender and receiver means one clock.
pub fn boot_id() -> [u8; 16] {
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let hex: Vec<u8> = text.bytes().filter(|b| b.is_ascii_hexdigit()).collect();
    let mut id = [0u8; 16];
    for (i, pair) in hex.chunks(2).take(16).enumerate() {
        let s = std::str::from_utf8(pair).unwrap_or("0");
        id[i] = u8::from_str_radix(s, 16).unwrap_or(0);
    }
    id
}

fn setsockopt_int(fd: RawFd, level: i32, name: i32, value: i32) -> io::Result<()> {
    let r = unsafe {
        libc::setsockopt(fd, level, name, &value as *const i32 as *const libc::c_void, size_of::<i32>() as u32)
    };
    if r == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// Large socket buffers absorb bursts; SO_*BUFFORCE (root) passes net.core.*mem_max.
pub fn set_buffers(fd: RawFd, bytes: i32) {
    for (force, plain) in [(libc::SO_RCVBUFFORCE, libc::SO_RCVBUF), (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF)] {
        if setsockopt_int(fd, libc::SOL_SOCKET, force, bytes).is_err() {
            let _ = setsockopt_int(fd, libc::SOL_SOCKET, plain, bytes);
        }
    }
}

/// Asks the kernel to stamp each datagram's arrival (SO_TIMESTAMPNS, CLOCK_REALTIME),
/// so receive-side scheduling delay does not count as network delay.
pub fn enable_rx_timestamps(fd: RawFd) -> bool {
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1).is_ok()
}

/// Receive timeout so blocking loops can notice signals and interval ticks.
pub fn set_recv_timeout(fd: RawFd, micros: i64) {
    let tv = libc::timeval { tv_sec: (micros / 1_000_000) as _, tv_usec: (micros % 1_000_000) as _ };
    unsafe {
        libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVTIMEO, &tv as *const _ as *const libc::c_void,
                         size_of::<libc::timeval>() as u32)
    };
}

/// A socket address in the kernel's layout, for `msg_name`.
pub fn to_sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, u32) {
    let mut ss: libc::sockaddr_storage = unsafe { zeroed() };
    match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as u16,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from(*a.ip()).to_be() },
                sin_zero: [0; 8],
            };
            unsafe { *(&mut ss as *mut _ as *mut libc::sockaddr_in) = sin };
            (ss, size_of::<libc::sockaddr_in>() as u32)
        }
        SocketAddr::V6(a) => {
            let mut sin6: libc::sockaddr_in6 = unsafe { zeroed() };
            sin6.sin6_family = libc::AF_INET6 as u16;
            sin6.sin6_port = a.port().to_be();
            sin6.sin6_addr.s6_addr = a.ip().octets();
            sin6.sin6_scope_id = a.scope_id();
            unsafe { *(&mut ss as *mut _ as *mut libc::sockaddr_in6) = sin6 };
            (ss, size_of::<libc::sockaddr_in6>() as u32)
        }
    }
}

/// The std address of a kernel socket address (None for families other than IP).
pub fn from_sockaddr(ss: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match ss.ss_family as i32 {
        libc::AF_INET => {
            let sin = unsafe { &*(ss as *const _ as *const libc::sockaddr_in) };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(ip, u16::from_be(sin.sin_port))))
        }
        libc::AF_INET6 => {
            let s6 = unsafe { &*(ss as *const _ as *const libc::sockaddr_in6) };
            let ip = Ipv6Addr::from(s6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(ip, u16::from_be(s6.sin6_port), 0, s6.sin6_scope_id)))
        }
        _ => None,
    }
}

/// Bytes of headers under the UDP payload on an Ethernet link (no FCS, as veth and
/// most capture points see frames): Ethernet 14 + IPv4 20 / IPv6 40 + UDP 8.
pub fn udp_l2_overhead(addr: &SocketAddr) -> usize {
    if addr.is_ipv4() { 14 + 20 + 8 } else { 14 + 40 + 8 }
}

const CTRL_LEN: usize = 64;

/// Preallocated buffers and headers for one `sendmmsg`/`recvmmsg` call.
pub struct Batch {
    pub bufs: Vec<Vec<u8>>,
    pub lens: Vec<usize>,
    pub names: Vec<libc::sockaddr_storage>,
    pub name_lens: Vec<u32>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    ctrl: Vec<[u8; CTRL_LEN]>,
}

impl Batch {
    pub fn new(count: usize, buf_len: usize) -> Batch {
        Batch {
            bufs: vec![vec![0u8; buf_len]; count],
            lens: vec![0; count],
            names: vec![unsafe { zeroed() }; count],
            name_lens: vec![0; count],
            iovs: vec![unsafe { zeroed() }; count],
            hdrs: vec![unsafe { zeroed() }; count],
            ctrl: vec![[0u8; CTRL_LEN]; count],
        }
    }

    pub fn capacity(&self) -> usize {
        self.bufs.len()
    }

    /// Points header i at buffer i; done before every call so the Vecs may move freely.
    fn prepare(&mut self, n: usize, receiving: bool) {
        for i in 0..n {
            let len = if receiving { self.bufs[i].len() } else { self.lens[i] };
            self.iovs[i] = libc::iovec { iov_base: self.bufs[i].as_mut_ptr() as *mut _, iov_len: len };
            let h = &mut self.hdrs[i].msg_hdr;
            h.msg_iov = &mut self.iovs[i];
            h.msg_iovlen = 1;
            h.msg_name = &mut self.names[i] as *mut _ as *mut libc::c_void;
            h.msg_namelen = if receiving { size_of::<libc::sockaddr_storage>() as u32 } else { self.name_lens[i] };
            h.msg_control = if receiving { self.ctrl[i].as_mut_ptr() as *mut _ } else { std::ptr::null_mut() };
            h.msg_controllen = if receiving { CTRL_LEN } else { 0 };
            h.msg_flags = 0;
            self.hdrs[i].msg_len = 0;
        }
    }

    /// Sends datagrams 0..n; returns how many the kernel took before an error (if any).
    pub fn send(&mut self, fd: RawFd, n: usize) -> (usize, Option<io::Error>) {
        self.prepare(n, false);
        let mut done = 0;
        while done < n {
            let r = unsafe { libc::sendmmsg(fd, self.hdrs[done..].as_mut_ptr(), (n - done) as u32, 0) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return (done, Some(e));
            }
            done += r as usize;
        }
        (n, None)
    }

    /// Receives up to capacity datagrams, waiting for at least one (or the timeout).
    pub fn recv(&mut self, fd: RawFd) -> io::Result<usize> {
        let n = self.capacity();
        self.prepare(n, true);
        let r = unsafe {
            libc::recvmmsg(fd, self.hdrs.as_mut_ptr(), n as u32, libc::MSG_WAITFORONE, std::ptr::null_mut())
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        for i in 0..r as usize {
            self.lens[i] = self.hdrs[i].msg_len as usize;
            self.name_lens[i] = self.hdrs[i].msg_hdr.msg_namelen;
        }
        Ok(r as usize)
    }

    /// The kernel arrival stamp of received datagram i (SO_TIMESTAMPNS), if present.
    pub fn rx_timestamp(&self, i: usize) -> Option<u64> {
        let h = &self.hdrs[i].msg_hdr;
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(h);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                    let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                    return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
                c = libc::CMSG_NXTHDR(h, c);
            }
        }
        None
    }
}

/// Sends `buf` as datagrams of `seg` bytes each in one call (UDP GSO, Linux >= 4.18):
/// one syscall and one route lookup for up to 64 packets; the kernel (or the NIC)
/// cuts the segments, so each still leaves as its own datagram.
pub fn send_gso(fd: RawFd, buf: &mut [u8], seg: u16, name: &mut libc::sockaddr_storage, name_len: u32) -> io::Result<()> {
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut _, iov_len: buf.len() };
    let space = unsafe { libc::CMSG_SPACE(size_of::<u16>() as u32) } as usize;
    let mut ctrl = [0u8; 64];
    let mut h: libc::msghdr = unsafe { zeroed() };
    h.msg_name = name as *mut _ as *mut libc::c_void;
    h.msg_namelen = name_len;
    h.msg_iov = &mut iov;
    h.msg_iovlen = 1;
    h.msg_control = ctrl.as_mut_ptr() as *mut _;
    h.msg_controllen = space;
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&h);
        (*c).cmsg_level = libc::SOL_UDP;
        (*c).cmsg_type = libc::UDP_SEGMENT;
        (*c).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as u32) as usize;
        std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut u16, seg);
    }
    loop {
        let r = unsafe { libc::sendmsg(fd, &h, 0) };
        if r >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
