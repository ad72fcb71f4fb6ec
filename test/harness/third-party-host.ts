import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { synthesizeAudio } from '../reference-service/index.js';

/**
 * A web host that is not the gateway: serves audio files for the `url` input of
 * audio_transcribe and records what it was sent, so tests can prove the gateway key never
 * reaches it.
 */
export interface ThirdPartyHost {
  url: string;
  audio: Buffer;
  requests: { path: string; authorization: string | undefined; apiKey: string | undefined }[];
  close(): Promise<void>;
}

const ENDLESS_LIMIT_BYTES = 16 * 1024 * 1024;

export async function startThirdPartyHost(): Promise<ThirdPartyHost> {
  const audio = synthesizeAudio('talk', 'mp3');
  const wav = synthesizeAudio('recording', 'wav');
  const requests: ThirdPartyHost['requests'] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://host.invalid');
    requests.push({
      path: url.pathname,
      authorization: req.headers.authorization,
      apiKey: req.headers['x-api-key'] as string | undefined,
    });
    req.resume();
    switch (url.pathname) {
      case '/audio/talk.mp3':
        res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': audio.length });
        return res.end(audio);
      case '/audio/recording':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        return res.end(wav);
      case '/redirect':
        res.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
        return res.end('moved');
      case '/huge.mp3':
        // Declares 2 GiB, sends nothing: the client must refuse on the header alone.
        res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': String(2 * 1024 ** 3) });
        return res.flushHeaders();
      case '/endless.mp3': {
        // No length declared: the client must stop reading at its limit.
        res.writeHead(200, { 'content-type': 'audio/mpeg' });
        const chunk = Buffer.concat([audio, Buffer.alloc(64 * 1024 - audio.length, 1)]);
        let sent = 0;
        const pump = () => {
          while (sent < ENDLESS_LIMIT_BYTES && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        return pump();
      }
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    audio,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
