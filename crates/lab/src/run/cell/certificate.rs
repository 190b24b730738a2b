//! The run's TLS certificate: every TLS stack of a run serves the same one, made afresh per run
//! with one key type and one curve (ECDSA P-256), so no stack is faster for a cheaper key. A CA
//! of the run signs a server certificate for localhost and the server's addresses; clients that
//! verify (the load generator's `--cacert`, the verifier) trust the CA alone.

use crate::error::LabError;
use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose, SanType};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// Where a run's certificate files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunCertificate {
    /// The CA's certificate (PEM), what a verifying client trusts.
    pub ca: PathBuf,
    /// The server's certificate (PEM), what a stack serves: TLS_CERT.
    pub cert: PathBuf,
    /// The server certificate's private key (PEM, PKCS#8): TLS_KEY.
    pub key: PathBuf,
}

impl RunCertificate {
    /// Where the files of the run whose folder is `dir` are, made or not.
    pub(crate) fn at(dir: &Path) -> RunCertificate {
        let tls = dir.join("tls");
        RunCertificate { ca: tls.join("ca.pem"), cert: tls.join("cert.pem"), key: tls.join("key.pem") }
    }

    /// The files under `dir` (`tls/` of the run's folder), made on first use: a certificate for
    /// localhost, 127.0.0.1, ::1 and `server_ip`.
    pub(crate) fn in_run(dir: &Path, server_ip: IpAddr) -> Result<RunCertificate, LabError> {
        let files = RunCertificate::at(dir);
        let tls = dir.join("tls");
        if files.key.is_file() && files.cert.is_file() && files.ca.is_file() {
            return Ok(files);
        }
        let fail = |problem: String| LabError::Input {
            what: tls.display().to_string(),
            problem,
            hint: "check free space and permissions in the temporary directory".into(),
        };
        let (ca, cert, key) = make(server_ip).map_err(|e| fail(format!("cannot make the run's TLS certificate: {e}")))?;
        std::fs::create_dir_all(&tls).map_err(|e| fail(e.to_string()))?;
        for (path, pem) in [(&files.ca, ca), (&files.cert, cert), (&files.key, key)] {
            std::fs::write(path, pem).map_err(|e| fail(format!("{}: {e}", path.display())))?;
        }
        Ok(files)
    }
}

/// A CA and a server certificate signed by it, as PEM: (CA, certificate, its key).
fn make(server_ip: IpAddr) -> Result<(String, String, String), rcgen::Error> {
    let ca_key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, "bakeoff run CA");
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca = ca_params.self_signed(&ca_key)?;
    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256)?;
    let mut params = CertificateParams::new(vec!["localhost".to_string()])?;
    params.distinguished_name.push(DnType::CommonName, "localhost");
    let mut ips: Vec<IpAddr> = vec![IpAddr::from([127, 0, 0, 1]), IpAddr::from(std::net::Ipv6Addr::LOCALHOST), server_ip];
    ips.dedup();
    params.subject_alt_names.extend(ips.into_iter().map(SanType::IpAddress));
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params.signed_by(&key, &ca, &ca_key)?;
    Ok((ca.pem(), cert.pem(), key.serialize_pem()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_makes_one_certificate_and_keeps_it() {
        let dir = std::env::temp_dir().join(format!("bakeoff-cert-{}", std::process::id()));
        let first = RunCertificate::in_run(&dir, "10.0.0.2".parse().unwrap()).unwrap();
        let key = std::fs::read_to_string(&first.key).unwrap();
        assert!(key.starts_with("-----BEGIN PRIVATE KEY-----"), "{key}");
        assert!(std::fs::read_to_string(&first.cert).unwrap().contains("BEGIN CERTIFICATE"));
        let again = RunCertificate::in_run(&dir, "10.0.0.2".parse().unwrap()).unwrap();
        assert_eq!(again, first);
        assert_eq!(std::fs::read_to_string(&again.key).unwrap(), key, "made once per run");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
