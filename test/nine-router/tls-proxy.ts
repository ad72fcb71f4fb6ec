// The outbound proxy 9router is given (HTTPS_PROXY): CONNECT tunnels to the upstream hosts it
// calls at hard-coded https addresses are ended here, TLS is terminated with the test CA's leaf
// certificate, and the requests inside are handed to the fake upstream's HTTP server. Any other
// destination is refused and remembered, so nothing leaves the machine unnoticed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { Certificates } from './certificates.js';

export const UPSTREAM_HOSTS = [
  'api.tavily.com',
  'api.exa.ai',
  'google.serper.dev',
  'api.search.brave.com',
  'r.jina.ai',
  'api.firecrawl.dev',
  'api.x.ai',
  'api.openai.com',
  'api.groq.com',
] as const;

export interface TlsProxy {
  url: string;
  /** Destinations refused (host:port), in order. */
  refused: string[];
  close(): Promise<void>;
}

export async function startTlsProxy(certs: Certificates, upstream: Server): Promise<TlsProxy> {
  const refused: string[] = [];
  const sockets = new Set<Socket>();
  const proxy = createServer((req, res) => {
    // Plain-http proxying (an absolute URL): 9router is told to skip the proxy for loopback, and
    // every upstream it has is https, so anything here is unexpected.
    refused.push(req.url ?? '?');
    res.writeHead(403).end('not proxied in tests');
  });
  proxy.on('connect', (req, clientSocket: Socket, head: Buffer) => {
    const target = req.url ?? '';
    const [host, port] = target.split(':');
    sockets.add(clientSocket);
    clientSocket.on('close', () => sockets.delete(clientSocket));
    clientSocket.on('error', () => clientSocket.destroy());
    if (!UPSTREAM_HOSTS.includes(host as (typeof UPSTREAM_HOSTS)[number]) || port !== '443') {
      refused.push(target);
      clientSocket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    clientSocket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) clientSocket.unshift(head);
    const tls = new TLSSocket(clientSocket, {
      isServer: true,
      key: certs.key,
      cert: certs.cert,
      ALPNProtocols: ['http/1.1'],
    });
    tls.on('error', () => tls.destroy());
    upstream.emit('connection', tls);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    refused,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        proxy.close(() => resolve());
      }),
  };
}
