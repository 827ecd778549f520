// What a test file may leave behind, as tests/run.mjs checks after each file: processes the
// test process started that still run, ports it still listens on, entries in its scratch
// directory. Read from Linux's /proc; where there is none, nothing is reported.
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const PROC = '/proc';
const canLook = existsSync(join(PROC, 'self', 'stat'));

function readOrEmpty(path) {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // gone since the directory was read
  }
}

/** Every live process under `pid` (its children, theirs, …), as pid → command line. */
export function descendants(pid) {
  if (!canLook) return new Map();
  const children = new Map();
  for (const name of readdirSync(PROC)) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readOrEmpty(join(PROC, name, 'stat'));
    // "pid (comm) state ppid …": the command may hold spaces and parentheses, so split after the last ')'.
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // A zombie has ended; only its parent's wait is missing, and it holds nothing.
    if (!ppid || state === 'Z') continue;
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(name);
  }
  const found = new Map();
  const pending = [String(pid)];
  while (pending.length) {
    for (const child of children.get(pending.pop()) ?? []) {
      found.set(Number(child), readOrEmpty(join(PROC, child, 'cmdline')).replace(/\0/g, ' ').trim());
      pending.push(child);
    }
  }
  return found;
}

/** The TCP ports `pid` itself listens on (IPv4 and IPv6). */
function listeningPorts(pid) {
  if (!canLook) return new Set();
  const LISTEN = '0A';
  const portOfSocket = new Map();
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readOrEmpty(join(PROC, 'net', table)).split('\n')) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields[3] === LISTEN) portOfSocket.set(`socket:[${fields[9]}]`, parseInt(fields[1].split(':')[1], 16));
    }
  }
  const ports = new Set();
  let fds = [];
  try {
    fds = readdirSync(join(PROC, String(pid), 'fd'));
  } catch {
    return ports; // the process is gone
  }
  for (const fd of fds) {
    let target = '';
    try {
      target = readlinkSync(join(PROC, String(pid), 'fd', fd));
    } catch {
      continue; // closed since the directory was read
    }
    if (portOfSocket.has(target)) ports.add(portOfSocket.get(target));
  }
  return ports;
}

/** What is there now: taken before a file, it is what the file may leave as it found it. */
export function snapshot(pid, scratchDir) {
  return { processes: new Set(descendants(pid).keys()), ports: listeningPorts(pid), entries: new Set(readdirSync(scratchDir)) };
}

/** What appeared since `before` and is still there: processes, ports, scratch entries. */
/**
 * tsx compiles TypeScript in esbuild's service processes, which it starts on first need (one
 * per thread that compiles) and keeps for the test process's life: those are not a file's.
 */
const COMPILER = /\/esbuild --service=/;

/** tsx's compile cache (tsx-<uid>), which every process it runs in shares and keeps on purpose. */
const CACHES = /^tsx-\d+$/;

function leaksSince(before, pid, scratchDir) {
  const processes = [...descendants(pid)].filter(([child, command]) => !before.processes.has(child) && !COMPILER.test(command));
  const ports = [...listeningPorts(pid)].filter((port) => !before.ports.has(port));
  const entries = readdirSync(scratchDir).filter((name) => !before.entries.has(name) && !CACHES.test(name));
  return { processes, ports, entries, any: processes.length + ports.length + entries.length > 0 };
}

/**
 * Waits a little for what a file is still closing (a server's close or a child's exit the file
 * did not await is a leak only if it lasts): polls until nothing is left or `graceMs` passed.
 */
export async function settledLeaks(before, pid, scratchDir, graceMs) {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const leaks = leaksSince(before, pid, scratchDir);
    if (!leaks.any || Date.now() > deadline) return leaks;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The leaks in a sentence each, for the run's output. */
export function describeLeaks(leaks) {
  return [
    ...leaks.processes.map(([pid, command]) => `a process still running: ${pid} ${command}`),
    ...leaks.ports.map((port) => `a port still listening in the test process: ${port}`),
    ...leaks.entries.map((name) => `a scratch entry left in TMPDIR: ${name}`),
  ];
}

/** Kills the leaked processes and removes the scratch entries; ports go with the test process, which the caller replaces. */
export function cleanUp(leaks, scratchDir) {
  killAll(leaks.processes.map(([pid]) => pid));
  for (const name of leaks.entries) rmSync(join(scratchDir, name), { recursive: true, force: true });
}

export function killAll(pids) {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ended meanwhile
    }
  }
}
