// The one way a test says it needs something from the machine that npm does not install: a
// Debian package (Chromium, PostgreSQL, bindfs, faketime, haproxy) or running as root.
//   describe.skipIf(!systemHas('chromium', 'the browser tests of the views'))(…)
// Where it is present, systemHas() is true. Where it is missing, a developer's run skips the suite
// and prints what was not run and the one command that installs what it needs; with CI=true it
// throws instead, so the test file fails: CI installs everything (.ci/run), and a suite that
// silently stops running there would prove nothing.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type SystemNeed = 'chromium' | 'postgresql' | 'bindfs' | 'faketime' | 'haproxy' | 'root';

/** Chromium for the browser tests; CHROMIUM_PATH picks another build. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where PostgreSQL's server programs are: the newest /usr/lib/postgresql/<major>/bin, or null. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const majors = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const major of majors) {
    const bin = join(root, major, 'bin');
    if (['initdb', 'postgres', 'psql'].every((name) => existsSync(join(bin, name)))) return bin;
  }
  return null;
}

/** The `postgres` system user's ids, from /etc/passwd (PostgreSQL refuses to run as root). */
export function postgresUser(): { uid: number; gid: number } | null {
  try {
    const line = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('postgres:'));
    const [, , uid, gid] = line?.split(':') ?? [];
    return uid && gid ? { uid: Number(uid), gid: Number(gid) } : null;
  } catch {
    return null;
  }
}

/** setpriv (util-linux): a program's user and parent-death signal. */
export const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path));

const isRoot = () => process.getuid?.() === 0;
const runs = (program: string, args: string[]) =>
  spawnSync(program, args, { stdio: 'ignore', timeout: 10_000 }).status === 0;

/** Per need: what it is, how to tell it is here, and the one command that provides it. */
const NEEDS: Record<SystemNeed, { what: string; present: () => boolean; remedy: string }> = {
  chromium: {
    what: `Chromium at ${CHROMIUM}`,
    present: () => existsSync(CHROMIUM),
    remedy: 'Install it (Debian, as root) with: apt-get update && apt-get install -y chromium',
  },
  postgresql: {
    what: "PostgreSQL's server programs (initdb, postgres and psql in /usr/lib/postgresql/<major>/bin)",
    present: () =>
      postgresBinDir() !== null && (!isRoot() || (postgresUser() !== null && SETPRIV !== undefined)),
    remedy: 'Install it (Debian, as root) with: apt-get update && apt-get install -y postgresql',
  },
  bindfs: {
    what: 'bindfs (a FUSE file system; mounting one also needs root)',
    present: () => runs('bindfs', ['--version']),
    remedy: 'Install it (Debian, as root) with: apt-get update && apt-get install -y bindfs',
  },
  faketime: {
    what: 'faketime (libfaketime)',
    present: () => runs('faketime', ['--version']),
    remedy: 'Install it (Debian, as root) with: apt-get update && apt-get install -y faketime',
  },
  haproxy: {
    what: 'haproxy',
    present: () => runs('haproxy', ['-v']),
    remedy: 'Install it (Debian, as root) with: apt-get update && apt-get install -y haproxy',
  },
  root: {
    what: 'root (chown, mknod, mount)',
    present: isRoot,
    remedy: 'Run the tests as root: sudo -E env "PATH=$PATH" npm run test:all',
  },
};

/** CI=true (or 1): a missing need fails instead of skipping. */
export const IN_CI = /^(true|1)$/i.test(process.env.CI ?? '');

const found = new Map<SystemNeed, boolean>();
const said = new Set<string>();

/** The line a skipped suite prints, or the message a failing one throws. */
export function missingMessage(need: SystemNeed, notRun: string): string {
  const { what, remedy } = NEEDS[need];
  return IN_CI
    ? `CI=true, and ${what} is missing, so ${notRun} cannot run. ${remedy}`
    : `Not run: ${notRun}. Missing: ${what}. ${remedy}`;
}

/**
 * Whether the machine has `need`. Missing: outside CI, prints (once) that `notRun` was not run and
 * how to install what it needs, and returns false; with CI=true, throws.
 */
export function systemHas(need: SystemNeed, notRun: string): boolean {
  let present = found.get(need);
  if (present === undefined) {
    present = NEEDS[need].present();
    found.set(need, present);
  }
  if (present) return true;
  const message = missingMessage(need, notRun);
  if (IN_CI) throw new Error(message);
  if (!said.has(message)) {
    said.add(message);
    console.warn(message);
  }
  return false;
}

/** Every need in `needs` that the machine lacks (for a check of the whole run). */
export function lacking(needs: readonly SystemNeed[]): SystemNeed[] {
  return needs.filter((need) => !NEEDS[need].present());
}
