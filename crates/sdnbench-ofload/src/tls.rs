//! TLS to controllers that offer it (OVS `pssl:`, ONOS, Faucet). The
//! generator stays readiness-driven: rustls is fed from the non-blocking
//! socket and drained into the same plaintext buffers the TCP path uses.
//!
//! Controller certificates are checked against `--tls-ca`, but not against
//! the address: OpenFlow PKIs (ovs-pki) issue certificates without the
//! subject-alternative names a web client would require.

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct, Error, RootCertStore, SignatureScheme};
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;
use tokio::net::TcpStream;

/// Accepts a chain that verifies against the CA whatever name it carries.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(&self, ee: &CertificateDer<'_>, inter: &[CertificateDer<'_>], name: &ServerName<'_>, ocsp: &[u8], now: UnixTime) -> Result<ServerCertVerified, Error> {
        match self.0.verify_server_cert(ee, inter, name, ocsp, now) {
            Err(Error::InvalidCertificate(CertificateError::NotValidForName))
            | Err(Error::InvalidCertificate(CertificateError::NotValidForNameContext { .. })) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }
    fn verify_tls12_signature(&self, m: &[u8], c: &CertificateDer<'_>, d: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls12_signature(m, c, d)
    }
    fn verify_tls13_signature(&self, m: &[u8], c: &CertificateDer<'_>, d: &DigitallySignedStruct) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls13_signature(m, c, d)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

fn certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let certs: Vec<_> = rustls_pemfile::certs(&mut io::BufReader::new(f)).collect::<Result<_, _>>().map_err(|e| format!("{}: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{}: no PEM certificate in it", path.display()));
    }
    Ok(certs)
}

fn key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    rustls_pemfile::private_key(&mut io::BufReader::new(f))
        .map_err(|e| format!("{}: {e}", path.display()))?
        .ok_or_else(|| format!("{}: no PEM private key in it", path.display()))
}

/// Client configuration: trust `ca`; present `cert`+`key` when given (OVS requires it).
pub fn client_config(ca: &Path, cert: Option<&Path>, key_path: Option<&Path>) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = RootCertStore::empty();
    for c in certs(ca)? {
        roots.add(c).map_err(|e| format!("{}: {e}", ca.display()))?;
    }
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone()).build().map_err(|e| format!("--tls-ca: {e}"))?;
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(ChainOnly(verifier)));
    let config = match (cert, key_path) {
        (Some(c), Some(k)) => builder.with_client_auth_cert(certs(c)?, key(k)?).map_err(|e| format!("--tls-cert/--tls-key: {e}"))?,
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("--tls-cert and --tls-key go together".into()),
    };
    Ok(Arc::new(config))
}

/// A new client session for the controller at `host`.
pub fn connect(config: &Arc<ClientConfig>, host: &str) -> Result<ClientConnection, String> {
    let name = ServerName::try_from(host.to_string()).map_err(|e| format!("--controller {host}: {e}"))?;
    ClientConnection::new(config.clone(), name).map_err(|e| e.to_string())
}

/// The non-blocking socket as std Read/Write for rustls (WouldBlock passes through).
struct Sock<'a>(&'a TcpStream);

impl Read for Sock<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.try_read(buf)
    }
}

impl Write for Sock<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.try_write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Reads TLS records from the socket and returns decrypted bytes; Ok(0) at
/// end of stream, WouldBlock while no application data is ready.
pub fn read(tls: &mut ClientConnection, stream: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    let mut eof = false;
    match tls.read_tls(&mut Sock(stream)) {
        Ok(0) => eof = true,
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
        Err(e) => return Err(e),
    }
    tls.process_new_packets().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("TLS: {e}")))?;
    match tls.reader().read(buf) {
        Ok(0) if !buf.is_empty() => Ok(0),
        Ok(n) => Ok(n),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock && eof => Ok(0),
        Err(e) => Err(e),
    }
}

/// Encrypts `plain` and sends what the socket takes; the rest stays queued
/// inside rustls (`wants_write`).
pub fn write(tls: &mut ClientConnection, stream: &TcpStream, plain: &[u8]) -> io::Result<()> {
    if !plain.is_empty() {
        tls.writer().write_all(plain)?;
    }
    while tls.wants_write() {
        match tls.write_tls(&mut Sock(stream)) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
