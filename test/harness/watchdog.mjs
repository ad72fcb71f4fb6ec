// A watchdog a process group started by the tests carries (test/harness/lifetime.ts starts it,
// detached, in a session of its own, so a signal to the runner's group does not reach it):
//   node watchdog.mjs <pgid> <pid>:<start time> [<pid>:<start time> …]
// Every 200 ms it checks that each watched process (the test worker that started the group and
// the vitest process of the run) is still the same process (pid and start time, so a reused pid
// does not count) and that the group still has a member. When a watched process is gone, the
// run was killed or ended without stopping the group: it sends the group SIGTERM, then SIGKILL
// after 2 s, and exits. When the group is gone first, it exits without doing anything.
// Plain Node, no imports from the project: it must start fast and run on any Node the tests use.
import { readFileSync } from 'node:fs';

const [pgidArg, ...watchedArgs] = process.argv.slice(2);
const pgid = Number(pgidArg);
const watched = watchedArgs.map((arg) => {
  const [pid, start] = arg.split(':');
  return { pid: Number(pid), start };
});
if (!Number.isInteger(pgid) || pgid <= 1 || watched.length === 0) {
  console.error('usage: watchdog.mjs <pgid> <pid>:<start time> …');
  process.exit(2);
}

/** Field 22 of /proc/<pid>/stat (after the command name, which may hold spaces and parentheses). */
function startTime(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function groupAlive() {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function signalGroup(signal) {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Gone already.
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

while (groupAlive()) {
  if (watched.some(({ pid, start }) => startTime(pid) !== start)) {
    signalGroup('SIGTERM');
    const deadline = Date.now() + 2_000;
    while (groupAlive() && Date.now() < deadline) await sleep(50);
    if (groupAlive()) signalGroup('SIGKILL');
    break;
  }
  await sleep(200);
}
