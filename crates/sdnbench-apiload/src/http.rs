//! A small HTTP/1.1 client: one request at a time per connection, exact
//! error classes, and detection of mid-response stalls.
//!
//! Hand-written rather than hyper so that every failure keeps its cause
//! (refused, reset, closed early, out of local ports) and so that the gaps
//! between reads of one response can be timed: a gap of ~40 ms between a
//! response's header and its body is the signature of Nagle's algorithm on
//! the server meeting delayed ACKs on the client, which Restlet (Floodlight)
//! and Faucet's Prometheus endpoint show with keep-alive.

use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::request::Prepared;

/// Largest response head or body accepted; anything bigger is a bad response.
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Socket options for every connection.
#[derive(Debug, Clone, Copy)]
pub struct ConnOptions {
    /// Disable Nagle on our side (TCP_NODELAY); on by default.
    pub nodelay: bool,
    /// Re-arm TCP_QUICKACK after every read so our ACKs are never delayed,
    /// which releases a server's Nagle-held segment at once.
    pub quickack: bool,
    /// A gap this long between two reads of one response counts as a stall.
    pub stall_after: Duration,
}

/// Why a request failed below HTTP.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// Reason label used in the output (`refused`, `reset`, `closed`, …).
    pub reason: &'static str,
    /// True when no byte of a response had arrived (a stale keep-alive
    /// connection closed by the server fails this way and may be retried).
    pub before_response: bool,
}

impl Failure {
    fn from_io(e: &io::Error, before_response: bool) -> Failure {
        use io::ErrorKind::*;
        let reason = match e.kind() {
            ConnectionRefused => "refused",
            ConnectionReset | ConnectionAborted | BrokenPipe => "reset",
            UnexpectedEof => "closed",
            AddrNotAvailable => "no_local_port",
            TimedOut => "timeout",
            InvalidData => "bad_response",
            _ => match e.raw_os_error() {
                Some(libc::EHOSTUNREACH) | Some(libc::ENETUNREACH) => "unreachable",
                Some(libc::EMFILE) | Some(libc::ENFILE) => "no_file_descriptors",
                _ => "io_error",
            },
        };
        Failure {
            reason,
            before_response,
        }
    }
}

/// A parsed response, body already consumed.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    pub status: u16,
    pub keep_alive: bool,
    /// The body contained the expected text (true when no check was asked).
    pub body_matched: bool,
    /// A gap of at least `stall_after` occurred between reads of this response.
    pub stalled: bool,
}

/// One TCP connection to the target.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    opts: ConnOptions,
    /// Serial number, so stalls can be attributed to connections.
    pub id: u64,
    /// Has already carried a response (so a failure may be a stale keep-alive).
    pub reused: bool,
    last_read: Option<Instant>,
    stalled: bool,
}

/// Opens a connection with the given options.
pub async fn connect(addr: SocketAddr, opts: ConnOptions, id: u64) -> Result<Conn, Failure> {
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| Failure::from_io(&e, true))?;
    stream
        .set_nodelay(opts.nodelay)
        .map_err(|e| Failure::from_io(&e, true))?;
    Ok(Conn {
        stream,
        buf: Vec::with_capacity(8192),
        opts,
        id,
        reused: false,
        last_read: None,
        stalled: false,
    })
}

enum Framing {
    Empty,
    Length(usize),
    Chunked,
    UntilClose,
}

impl Conn {
    /// Sends `req` and reads one complete response.
    pub async fn exchange(
        &mut self,
        req: &Prepared,
        expect: Option<&[u8]>,
    ) -> Result<Response, Failure> {
        self.last_read = None;
        self.stalled = false;
        self.buf.clear();
        self.stream
            .write_all(&req.bytes)
            .await
            .map_err(|e| Failure::from_io(&e, true))?;
        let (status, keep_alive, framing) = loop {
            let head = self.read_head().await?;
            // 1xx interim responses (100 Continue) precede the real one.
            if !(100..200).contains(&head.0) || head.0 == 101 {
                break head;
            }
        };
        let framing = if req.head || status == 204 || status == 304 {
            Framing::Empty
        } else {
            framing
        };
        let keep = keep_alive && !matches!(framing, Framing::UntilClose);
        let body = self
            .read_body(framing, expect.is_some())
            .await
            .map_err(|e| Failure::from_io(&e, false))?;
        let body_matched = match expect {
            None => true,
            Some(pat) => pat.is_empty() || body.windows(pat.len()).any(|w| w == pat),
        };
        self.reused = true;
        Ok(Response {
            status,
            keep_alive: keep,
            body_matched,
            stalled: self.stalled,
        })
    }

    /// Reads until the server closes (or 2 s pass), so that the server, not
    /// us, closes first and keeps the TIME_WAIT state: with `Connection:
    /// close` at thousands of requests per second the client would otherwise
    /// run out of local ports.
    pub async fn linger_close(mut self) {
        let mut scratch = [0u8; 512];
        let wait = async {
            while let Ok(n) = self.stream.read(&mut scratch).await {
                if n == 0 {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(2), wait).await;
    }

    /// Reads more bytes into the buffer; notes stalls and re-arms quickack.
    async fn fill(&mut self) -> io::Result<usize> {
        if self.buf.capacity() - self.buf.len() < 4096 {
            self.buf.reserve(16 * 1024);
        }
        let n = self.stream.read_buf(&mut self.buf).await?;
        let now = Instant::now();
        if let Some(last) = self.last_read {
            if now.duration_since(last) >= self.opts.stall_after {
                self.stalled = true;
            }
        }
        self.last_read = Some(now);
        if self.opts.quickack {
            set_quickack(&self.stream);
        }
        Ok(n)
    }

    /// Makes sure at least `n` bytes are buffered.
    async fn ensure(&mut self, n: usize) -> io::Result<()> {
        while self.buf.len() < n {
            if self.fill().await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(())
    }

    /// Reads and parses a status line and headers; returns (status, keep-alive, framing).
    async fn read_head(&mut self) -> Result<(u16, bool, Framing), Failure> {
        let mut scanned = 0;
        let end = loop {
            if let Some(i) = find(&self.buf[scanned..], b"\r\n\r\n") {
                break scanned + i;
            }
            scanned = self.buf.len().saturating_sub(3);
            if self.buf.len() > MAX_HEAD {
                return Err(Failure {
                    reason: "bad_response",
                    before_response: false,
                });
            }
            let before = self.buf.is_empty();
            match self.fill().await {
                Ok(0) => {
                    return Err(Failure {
                        reason: "closed",
                        before_response: before,
                    })
                }
                Ok(_) => {}
                Err(e) => return Err(Failure::from_io(&e, before)),
            }
        };
        let parsed = parse_head(&self.buf[..end]).ok_or(Failure {
            reason: "bad_response",
            before_response: false,
        });
        self.buf.drain(..end + 4);
        parsed
    }

    /// Consumes the body; returns it when `keep` is set (for the body check).
    async fn read_body(&mut self, framing: Framing, keep: bool) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        let mut take = |buf: &mut Vec<u8>, n: usize| {
            if keep && body.len() < MAX_BODY {
                body.extend_from_slice(&buf[..n]);
            }
            buf.drain(..n);
        };
        match framing {
            Framing::Empty => {}
            Framing::Length(n) => {
                if n > MAX_BODY {
                    return Err(io::ErrorKind::InvalidData.into());
                }
                self.ensure(n).await?;
                take(&mut self.buf, n);
            }
            Framing::UntilClose => loop {
                let len = self.buf.len();
                take(&mut self.buf, len);
                if self.fill().await? == 0 {
                    break;
                }
            },
            Framing::Chunked => loop {
                let line_end = self.read_line().await?;
                let line = std::str::from_utf8(&self.buf[..line_end])
                    .map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
                let size_text = line.split(';').next().unwrap_or("").trim();
                let size = usize::from_str_radix(size_text, 16)
                    .map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
                self.buf.drain(..line_end + 2);
                if size == 0 {
                    // Trailer fields end with an empty line.
                    loop {
                        let l = self.read_line().await?;
                        self.buf.drain(..l + 2);
                        if l == 0 {
                            break;
                        }
                    }
                    break;
                }
                if size > MAX_BODY {
                    return Err(io::ErrorKind::InvalidData.into());
                }
                self.ensure(size + 2).await?;
                take(&mut self.buf, size);
                self.buf.drain(..2);
            },
        }
        Ok(body)
    }

    /// Waits for a CRLF-terminated line; returns its length without CRLF.
    async fn read_line(&mut self) -> io::Result<usize> {
        loop {
            if let Some(i) = find(&self.buf, b"\r\n") {
                return Ok(i);
            }
            if self.buf.len() > MAX_HEAD {
                return Err(io::ErrorKind::InvalidData.into());
            }
            if self.fill().await? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Parses `HTTP/1.x CODE REASON` and the headers that decide framing and reuse.
fn parse_head(head: &[u8]) -> Option<(u16, bool, Framing)> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let mut status_line = lines.next()?.splitn(3, ' ');
    let version = status_line.next()?;
    let status: u16 = status_line.next()?.parse().ok()?;
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        _ => return None,
    };
    let (mut keep, mut length, mut chunked) = (!http10, None, false);
    for line in lines {
        let (k, v) = line.split_once(':')?;
        let v = v.trim();
        match k.trim().to_ascii_lowercase().as_str() {
            "content-length" => length = Some(v.parse::<usize>().ok()?),
            "transfer-encoding" => {
                chunked = v
                    .to_ascii_lowercase()
                    .split(',')
                    .any(|t| t.trim() == "chunked")
            }
            "connection" => {
                let v = v.to_ascii_lowercase();
                if v.contains("close") {
                    keep = false;
                } else if v.contains("keep-alive") {
                    keep = true;
                }
            }
            _ => {}
        }
    }
    let framing = if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        Framing::UntilClose
    };
    Some((status, keep, framing))
}

/// Asks the kernel to ACK immediately; Linux clears the flag again on its
/// own, which is why it is re-armed after every read.
fn set_quickack(stream: &TcpStream) {
    let one: libc::c_int = 1;
    // SAFETY: a valid socket fd and a pointer to a c_int that outlives the call.
    unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_QUICKACK,
            &one as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_decide_framing_and_reuse() {
        let (s, k, f) = parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: 5").unwrap();
        assert!(s == 200 && k && matches!(f, Framing::Length(5)));
        let (s, k, f) =
            parse_head(b"HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\nConnection: close")
                .unwrap();
        assert!(s == 500 && !k && matches!(f, Framing::Chunked));
        let (_, k, f) = parse_head(b"HTTP/1.0 200 OK\r\nServer: x").unwrap();
        assert!(!k && matches!(f, Framing::UntilClose));
        let (_, k, _) =
            parse_head(b"HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0").unwrap();
        assert!(k);
        assert!(parse_head(b"SSH-2.0-OpenSSH").is_none());
        assert!(parse_head(b"HTTP/1.1 200 OK\r\nContent-Length: x").is_none());
    }

    #[test]
    fn io_errors_keep_their_cause() {
        let r = |k: io::ErrorKind| Failure::from_io(&io::Error::from(k), true).reason;
        assert_eq!(r(io::ErrorKind::ConnectionRefused), "refused");
        assert_eq!(r(io::ErrorKind::ConnectionReset), "reset");
        assert_eq!(r(io::ErrorKind::UnexpectedEof), "closed");
        assert_eq!(r(io::ErrorKind::AddrNotAvailable), "no_local_port");
    }
}
