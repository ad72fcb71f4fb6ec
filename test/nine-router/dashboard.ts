// 9router's dashboard API, from loopback: a session cookie from the default password, then JSON
// calls. The harness configures the gateway through it, and tests clear cooldowns with it.
export class Dashboard {
  private constructor(
    readonly url: string,
    private readonly cookie: string,
  ) {}

  static async login(url: string, password = '123456'): Promise<Dashboard> {
    const res = await fetch(`${url}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ password }),
    });
    const cookie = /auth_token=[^;]+/.exec(res.headers.get('set-cookie') ?? '')?.[0];
    if (!res.ok || !cookie) throw new Error(`9router dashboard login failed: HTTP ${res.status}`);
    return new Dashboard(url, cookie);
  }

  /** Rebuilds a dashboard handle from `url` and `cookie` (handed from the set-up to test workers). */
  static from(url: string, cookie: string): Dashboard {
    return new Dashboard(url, cookie);
  }

  get session(): string {
    return this.cookie;
  }

  async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { cookie: this.cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`9router ${method} ${path}: HTTP ${res.status} ${text.slice(0, 200)}`);
    return (text ? JSON.parse(text) : {}) as T;
  }

  /** The cooldowns in force: each locked provider account and model. */
  async cooldowns(): Promise<{ provider: string; model: string; until?: string }[]> {
    const { models } = await this.call<{
      models: { provider: string; model: string; status: string; until?: string }[];
    }>('GET', '/api/models/availability');
    return models.filter((m) => m.status === 'cooldown');
  }

  /** Lifts every cooldown, so that one test's upstream error does not lock the next test out. */
  async clearCooldowns(): Promise<number> {
    const locked = await this.cooldowns();
    for (const { provider, model } of locked) {
      await this.call('POST', '/api/models/availability', { action: 'clearCooldown', provider, model });
    }
    return locked.length;
  }
}
