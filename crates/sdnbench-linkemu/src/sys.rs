//! Thin, safe wrappers over the Linux calls the emulator needs: clocks, an
//! absolute timerfd, epoll, a signalfd, real-time scheduling, a private network
//! namespace and interface flags.

use std::ffi::CString;
use std::io;
use std::mem::zeroed;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 { Err(io::Error::last_os_error()) } else { Ok(r) }
}

fn clock(id: libc::clockid_t) -> u64 {
    let mut ts: libc::timespec = unsafe { zeroed() };
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_MONOTONIC in ns: every release time and lateness is on this clock.
pub fn mono_ns() -> u64 {
    clock(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME minus CLOCK_MONOTONIC, ns: turns the kernel's packet timestamps
/// (CLOCK_REALTIME) into monotonic time. The tightest of a few paired readings.
pub fn realtime_offset_ns() -> i128 {
    let mut best = (u64::MAX, 0i128);
    for _ in 0..5 {
        let a = mono_ns();
        let r = clock(libc::CLOCK_REALTIME);
        let b = mono_ns();
        if b - a < best.0 {
            best = (b - a, r as i128 - (a / 2 + b / 2) as i128);
        }
    }
    best.1
}

/// CPU time this process used, s (user + system).
pub fn cpu_s() -> f64 {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID) as f64 / 1e9
}

/// Shrinks the timer slack (default 50 µs) so wake-ups are on time.
pub fn tight_timer_slack() {
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

/// SCHED_FIFO at `priority` where permitted; the policy in effect, as text.
pub fn try_realtime(priority: i32) -> String {
    if priority <= 0 {
        return "other".into();
    }
    let p = libc::sched_param { sched_priority: priority };
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } == 0 {
        // Locked memory: a page fault in the release path costs more than the spin saves.
        unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) };
        format!("fifo:{priority}")
    } else {
        "other".into()
    }
}

/// Pins this thread to one CPU.
pub fn pin_cpu(cpu: usize) -> io::Result<()> {
    let mut set: libc::cpu_set_t = unsafe { zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    check(unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) }).map(|_| ())
}

/// Moves this process into a new, empty network namespace. It lives as long as
/// the process: when the emulator dies, its namespace and the veth ends in it go,
/// and with them their peers in the hosts and the switches.
pub fn unshare_netns() -> io::Result<()> {
    check(unsafe { libc::unshare(libc::CLONE_NEWNET) })?;
    // No IPv6 autoconfiguration on the ends we forward between: they must not speak.
    for knob in ["all", "default"] {
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{knob}/disable_ipv6"), "1");
    }
    Ok(())
}

/// The index of interface `name` in this namespace, if it exists.
pub fn ifindex(name: &str) -> Option<u32> {
    let c = CString::new(name).ok()?;
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    (i != 0).then_some(i)
}

/// Sets an interface up and promiscuous, with IPv6 off so it never sends on its own.
pub fn bring_up(name: &str) -> io::Result<()> {
    let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6"), "1");
    let fd = unsafe { OwnedFd::from_raw_fd(check(libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0))?) };
    let mut req: libc::ifreq = unsafe { zeroed() };
    for (i, b) in name.bytes().take(libc::IFNAMSIZ - 1).enumerate() {
        req.ifr_name[i] = b as libc::c_char;
    }
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) })?;
    unsafe { req.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_PROMISC) as libc::c_short };
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCSIFFLAGS, &req) })?;
    Ok(())
}

/// An absolute CLOCK_MONOTONIC timer as a file descriptor for epoll.
pub struct Timer(OwnedFd);

impl Timer {
    pub fn new() -> io::Result<Timer> {
        let fd = check(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) })?;
        Ok(Timer(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Fire once at monotonic `at_ns` (0 disarms); `period_ns` > 0 repeats.
    pub fn set(&self, at_ns: u64, period_ns: u64) {
        let ts = |ns: u64| libc::timespec { tv_sec: (ns / 1_000_000_000) as _, tv_nsec: (ns % 1_000_000_000) as _ };
        let spec = libc::itimerspec { it_interval: ts(period_ns), it_value: ts(at_ns) };
        unsafe { libc::timerfd_settime(self.0.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
    }

    /// Read the expiry count so the fd stops being readable.
    pub fn drain(&self) {
        let mut n = 0u64;
        unsafe { libc::read(self.0.as_raw_fd(), &mut n as *mut u64 as *mut libc::c_void, 8) };
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// SIGTERM/SIGINT (stop) and SIGUSR1 (mark a window) as a readable descriptor.
pub struct Signals(OwnedFd);

/// What a signal asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    Stop,
    Mark,
}

impl Signals {
    /// Blocks the signals for the process and delivers them through the fd instead.
    pub fn new() -> io::Result<Signals> {
        let mut set: libc::sigset_t = unsafe { zeroed() };
        unsafe {
            libc::sigemptyset(&mut set);
            for s in [libc::SIGTERM, libc::SIGINT, libc::SIGUSR1] {
                libc::sigaddset(&mut set, s);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        let fd = check(unsafe { libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) })?;
        Ok(Signals(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// The next pending request, if any.
    pub fn next(&self) -> Option<Request> {
        let mut info: libc::signalfd_siginfo = unsafe { zeroed() };
        let n = unsafe {
            libc::read(self.0.as_raw_fd(), &mut info as *mut _ as *mut libc::c_void, size_of::<libc::signalfd_siginfo>())
        };
        if n != size_of::<libc::signalfd_siginfo>() as isize {
            return None;
        }
        Some(if info.ssi_signo == libc::SIGUSR1 as u32 { Request::Mark } else { Request::Stop })
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}

/// Level-triggered epoll over the rings, timers and signals; tags are caller-chosen u64s.
pub struct Poller(OwnedFd);

impl Poller {
    pub fn new() -> io::Result<Poller> {
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Poller(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn add(&self, fd: RawFd, tag: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: tag };
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) }).map(|_| ())
    }

    /// Blocks until something is ready (timeout_ms −1: no limit); the ready tags.
    pub fn wait(&self, out: &mut Vec<u64>, timeout_ms: i32) {
        let mut evs: [libc::epoll_event; 64] = unsafe { zeroed() };
        let n = unsafe { libc::epoll_wait(self.0.as_raw_fd(), evs.as_mut_ptr(), 64, timeout_ms) };
        out.clear();
        for ev in evs.iter().take(n.max(0) as usize) {
            out.push(ev.u64);
        }
    }
}
