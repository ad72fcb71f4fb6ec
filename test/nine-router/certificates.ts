// A throwaway certificate authority and one leaf certificate for the upstream hosts 9router calls
// at hard-coded https addresses, made with openssl for each test run. 9router trusts the CA
// through NODE_EXTRA_CA_CERTS; nothing else does.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { scaled } from '../harness/time.js';

const run = promisify(execFile);

export interface Certificates {
  /** PEM file of the CA, for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** The leaf's key and certificate (with SANs for every host), for the TLS-terminating proxy. */
  key: Buffer;
  cert: Buffer;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  try {
    await run('openssl', args, { cwd, timeout: scaled(30_000) });
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0]} failed: ${(e.stderr || e.message).trim().split('\n')[0]}`);
  }
}

/** Makes a CA and a leaf certificate for `hosts` in `dir` (EC keys: quick to make). */
export async function makeCertificates(dir: string, hosts: readonly string[]): Promise<Certificates> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(
    [
      'req',
      '-x509',
      ...ec,
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=gateway-tools-mcp test CA',
    ],
    dir,
  );
  await openssl(['req', ...ec, '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=upstream.test'], dir);
  const san = hosts.map((h) => `DNS:${h}`).join(',');
  writeFileSync(join(dir, 'leaf.ext'), `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n`);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      'leaf.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'leaf.pem',
      '-days',
      '2',
      '-extfile',
      'leaf.ext',
    ],
    dir,
  );
  return {
    caFile: join(dir, 'ca.pem'),
    key: readFileSync(join(dir, 'leaf.key')),
    cert: readFileSync(join(dir, 'leaf.pem')),
  };
}
