import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:net';

/**
 * An outbound HTTP proxy on 127.0.0.1, like a corporate one: CONNECT tunnels and absolute-form
 * requests. It never connects off this machine: a target is reached only when `route` maps it to
 * a local port (names that resolve nowhere, such as `*.invalid`, stand for hosts on the internet),
 * or when it is itself on loopback. Anything else gets 502. Every request is journaled.
 */
export interface ForwardProxy {
  url: string;
  /** `CONNECT host:port` or `GET http://host:port/path`, in arrival order. */
  journal: { method: string; target: string }[];
  /** The host names the proxy was asked to reach, in arrival order. */
  hosts(): string[];
  close(): Promise<void>;
}

export type ProxyRoute = (host: string, port: number) => { host: string; port: number } | undefined;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export async function startForwardProxy(route: ProxyRoute = () => undefined): Promise<ForwardProxy> {
  const journal: ForwardProxy['journal'] = [];
  const sockets = new Set<Socket>();
  const destination = (host: string, port: number) =>
    route(host, port) ?? (LOOPBACK.has(host) ? { host: host.replace(/^\[|\]$/g, ''), port } : undefined);

  const server = createServer((req, res) => {
    journal.push({ method: req.method ?? '', target: req.url ?? '' });
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute-form request expected');
      return;
    }
    const to = destination(target.hostname, Number(target.port || 80));
    if (!to) {
      res.writeHead(502).end(`proxy: no route to ${target.host}`);
      return;
    }
    const upstream = httpRequest(
      {
        host: to.host,
        port: to.port,
        method: req.method,
        path: target.pathname + target.search,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.headersSent || res.writeHead(502).end('proxy: upstream failed'));
    req.pipe(upstream);
  });

  server.on('connect', (req, client: Socket, head: Buffer) => {
    journal.push({ method: 'CONNECT', target: req.url ?? '' });
    const [, host = '', port = '0'] = /^\[?([^\]]*?)\]?:(\d+)$/.exec(req.url ?? '') ?? [];
    const to = destination(host, Number(port));
    if (!to) {
      client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(to.port, to.host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    journal,
    hosts: () =>
      journal.map((j) =>
        j.method === 'CONNECT'
          ? j.target.replace(/:\d+$/, '').replace(/^\[|\]$/g, '')
          : new URL(j.target).hostname,
      ),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
