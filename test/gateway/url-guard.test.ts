import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/config/config.js';
import { UrlGuard } from '../../src/gateway/url-guard.js';
import { isNonPublicAddress, parseHostEntry } from '../../src/lib/addresses.js';

describe('non-public addresses', () => {
  it('flags loopback, private, link-local, metadata, CGNAT, multicast and reserved IPv4', () => {
    for (const address of [
      '127.0.0.1',
      '127.255.255.254',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
    ]) {
      expect(isNonPublicAddress(address), address).toBe(true);
    }
  });

  it('flags the IPv6 forms, including IPv4 addresses hidden inside IPv6', () => {
    for (const address of [
      '::1',
      '[::1]',
      '::',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '[::ffff:7f00:1]',
      '::ffff:169.254.169.254',
      '::127.0.0.1',
      '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
      '64:ff9b::10.0.0.1',
      '2002:c0a8:0101::1', // 6to4 of 192.168.1.1
    ]) {
      expect(isNonPublicAddress(address), address).toBe(true);
    }
  });

  it('lets public addresses and host names through (names are checked when they resolve)', () => {
    for (const address of [
      '8.8.8.8',
      '1.1.1.1',
      '172.32.0.1',
      '192.169.0.1',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808', // NAT64 of 8.8.8.8
      '2002:0808:0808::1', // 6to4 of 8.8.8.8
      'example.com',
      'localhost', // a name: the connect-time lookup decides
    ]) {
      expect(isNonPublicAddress(address), address).toBe(false);
    }
  });
});

describe('UrlGuard', () => {
  const gateway = 'http://127.0.0.1:20128';

  it('trusts the gateway origin and only it by default', () => {
    const guard = new UrlGuard(gateway, []);
    expect(guard.classify(new URL('http://127.0.0.1:20128/files/v.mp4'))).toBe('trusted');
    expect(guard.classify(new URL('http://127.0.0.1:20129/files/v.mp4'))).toBe('guarded');
    expect(guard.classify(new URL('https://127.0.0.1:20128/'))).toBe('guarded');
    expect(guard.classify(new URL('https://cdn.example.com/v.mp4'))).toBe('guarded');
  });

  it('trusts listed hosts, with or without a port, and * trusts any', () => {
    const guard = new UrlGuard(gateway, ['127.0.0.1:8080', 'nas.local', '[::1]:9000']);
    expect(guard.classify(new URL('http://127.0.0.1:8080/a.mp3'))).toBe('trusted');
    expect(guard.classify(new URL('http://127.0.0.1:8081/a.mp3'))).toBe('guarded');
    expect(guard.classify(new URL('http://nas.local/a.mp3'))).toBe('trusted');
    expect(guard.classify(new URL('https://nas.local:8443/a.mp3'))).toBe('trusted');
    expect(guard.classify(new URL('http://[::1]:9000/a.mp3'))).toBe('trusted');
    expect(guard.classify(new URL('http://[::1]:9001/a.mp3'))).toBe('guarded');
    expect(new UrlGuard(gateway, ['*']).classify(new URL('http://10.0.0.1/'))).toBe('trusted');
  });

  it('refuses address literals in non-public ranges before any connection', () => {
    const guard = new UrlGuard(gateway, []);
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]:80/',
      'http://2130706433/',
    ]) {
      expect(() => guard.assertPublicLiteral(new URL(url)), url).toThrow(/Refused to connect/);
    }
    expect(() => guard.assertPublicLiteral(new URL('http://93.184.215.14/'))).not.toThrow();
  });

  it('parses allow-list entries the way URLs name hosts', () => {
    expect(parseHostEntry('LocalHost:3000')).toEqual({ hostname: 'localhost', port: '3000' });
    expect(parseHostEntry('::1')).toEqual({ hostname: '[::1]', port: '' });
    expect(parseHostEntry('http://x')).toBeUndefined();
    expect(parseHostEntry('a b')).toBeUndefined();
    expect(parseHostEntry('')).toBeUndefined();
  });

  it('is configured by GATEWAY_ALLOW_PRIVATE_URLS or --allow-private-urls, and validated', () => {
    const parse = (argv: string[], env: Record<string, string> = {}) =>
      parseCommandLine(argv, env, '/work/project').config;
    expect(parse([]).allowPrivateUrls).toEqual([]);
    expect(parse([], { GATEWAY_ALLOW_PRIVATE_URLS: '127.0.0.1:8080, nas.local' }).allowPrivateUrls).toEqual([
      '127.0.0.1:8080',
      'nas.local',
    ]);
    expect(parse(['--allow-private-urls', '*']).allowPrivateUrls).toEqual(['*']);
    expect(() => parse([], { GATEWAY_ALLOW_PRIVATE_URLS: 'http://x/y' })).toThrow(
      /GATEWAY_ALLOW_PRIVATE_URLS.*host names or addresses/,
    );
  });
});
