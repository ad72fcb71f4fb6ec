import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/config/config.js';
import { proxyPasswords, readProxySettings, shownProxy } from '../../src/config/proxy-settings.js';
import { createRuntime } from '../../src/runtime.js';

describe('proxy settings', () => {
  it('are absent without a proxy variable, or when NO_PROXY is *', () => {
    expect(readProxySettings({})).toBeUndefined();
    expect(readProxySettings({ NO_PROXY: 'example.com' })).toBeUndefined();
    expect(readProxySettings({ HTTPS_PROXY: 'http://proxy:3128', NO_PROXY: '*' })).toBeUndefined();
    expect(readProxySettings({ HTTPS_PROXY: '  ' })).toBeUndefined();
  });

  it('prefer lowercase names, and send https through HTTP_PROXY when HTTPS_PROXY is unset', () => {
    expect(readProxySettings({ http_proxy: 'http://low:1', HTTP_PROXY: 'http://up:2' })).toEqual({
      httpProxy: 'http://low:1/',
      httpsProxy: 'http://low:1/',
      noProxy: '',
    });
    expect(readProxySettings({ HTTPS_PROXY: 'https://secure:443', no_proxy: 'a.com,b.com' })).toEqual({
      httpProxy: '',
      httpsProxy: 'https://secure/',
      noProxy: 'a.com,b.com',
    });
  });

  it('read host:port without a scheme as an http proxy, as curl does', () => {
    expect(readProxySettings({ HTTPS_PROXY: 'proxy.corp:3128' })?.httpsProxy).toBe('http://proxy.corp:3128/');
  });

  it('keep proxy credentials out of what is shown, and out of logs and results', () => {
    const url = 'http://me:p%40ss-w0rd@proxy.corp:3128';
    expect(shownProxy(url)).toBe('http://proxy.corp:3128');
    expect(proxyPasswords(readProxySettings({ HTTPS_PROXY: url }))).toEqual(['p%40ss-w0rd', 'p@ss-w0rd']);
    const { config } = parseCommandLine([], { HTTPS_PROXY: url }, '/work/project');
    const runtime = createRuntime(config);
    expect(runtime.scrub(`CONNECT via ${url} failed (p@ss-w0rd)`)).not.toMatch(/p%40ss-w0rd|p@ss-w0rd/);
  });
});
