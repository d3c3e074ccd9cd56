/** Mutual-TLS material for agent-to-agent traffic: the cluster CA, agent and operator certificates. */

export { CA_CERT_FILE, CA_KEY_FILE, type CertificateAuthority } from "./certificate-authority.js";
export {
  type ClusterCertificate,
  type ClusterCertificates,
  type ClusterCertificatesOptions,
  createClusterCertificates,
  loadMutualTls,
  OPERATOR_NAME,
} from "./cluster-certificates.js";
export { DEFAULT_DIAGNOSE_TIMEOUT_MS, diagnoseTls, type TlsDiagnosis } from "./diagnose-tls.js";
export { type CertificateFiles, certificateFilesOf } from "./issue-certificate.js";
export { DEFAULT_OPENSSL } from "./openssl.js";
export { DEFAULT_CERT_HOSTS, subjectAltNames } from "./subject-alt-names.js";
export { KEY_FILE_MODE } from "./work-dir.js";
