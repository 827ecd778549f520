import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export type ServiceProcess = {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
};

/** `npm start`'s entry point as a real child process, as an operator would run it. */
export function spawnService(env: Record<string, string>, role: 'all' | 'gateway' | 'worker' = 'all'): ServiceProcess {
  return spawnScript('gateway/src/main.ts', [`--role=${role}`], env);
}

/** One of the project's TypeScript entry points (as its npm script runs it) as a child process. */
export function spawnScript(entry: string, args: string[], env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Polls `url` until it answers 200, the process exits, or the time is up. */
export async function waitUntilReady(url: string, service: ServiceProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  service.exited.then(() => (exited = true));
  while (Date.now() < deadline && !exited) {
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`service not ready at ${url}:\n${service.output()}`);
}
