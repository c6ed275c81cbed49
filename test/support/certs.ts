/**
 * The test certificates (test/support/make-certs.sh): made with openssl at test time into one
 * directory outside the repository, shared by every test file and by the broker start scripts
 * that need them (the same `BQ_TEST_CERTS_DIR`), never committed.
 */
import {execFileSync} from 'node:child_process'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

const SCRIPT = fileURLToPath(new URL('make-certs.sh', import.meta.url))

export interface TestCerts {
  dir: string
  ca: string
  serverCert: string
  serverKey: string
  clientCert: string
  clientKey: string
  wrongHostCert: string
  wrongHostKey: string
  expiredCert: string
  expiredKey: string
  untrustedCert: string
  untrustedKey: string
  otherCa: string
  /** PKCS#12 stores for the Java brokers, password `bqtest`. */
  serverP12: string
  clientP12: string
  truststoreP12: string
}

export const CERTS_DIR = process.env.BQ_TEST_CERTS_DIR ?? join(tmpdir(), 'bq-test-certs')

/** Makes the certificates once (idempotent across files and processes) and returns their paths. */
export function testCerts(dir = CERTS_DIR): TestCerts {
  execFileSync('bash', [SCRIPT, dir], {stdio: ['ignore', 'ignore', 'inherit']})
  const at = (name: string) => join(dir, name)
  return {
    dir,
    ca: at('ca.pem'),
    serverCert: at('server.pem'),
    serverKey: at('server.key'),
    clientCert: at('client.pem'),
    clientKey: at('client.key'),
    wrongHostCert: at('wronghost.pem'),
    wrongHostKey: at('wronghost.key'),
    expiredCert: at('expired.pem'),
    expiredKey: at('expired.key'),
    untrustedCert: at('untrusted.pem'),
    untrustedKey: at('untrusted.key'),
    otherCa: at('other-ca.pem'),
    serverP12: at('server.p12'),
    clientP12: at('client.p12'),
    truststoreP12: at('truststore.p12'),
  }
}
