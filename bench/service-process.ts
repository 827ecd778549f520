import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { withBenchDatabase } from './database.ts';
import type { Command, Reply, ServiceInfo } from './protocol.ts';

export type ServiceProcess = {
  info: ServiceInfo;
  /** Runs a named command inside the service's process (see COMMANDS in serve.ts). */
  command<T>(name: string, args?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
};

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function parseLine(line: string): { type?: string } | undefined {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** Resolves with the `ready` line; anything else the service prints goes to our stderr. */
function readyLine(child: ChildProcess): Promise<ServiceInfo> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const parsed = parseLine(line);
      if (parsed?.type === 'ready') resolve(parsed as ServiceInfo);
      else process.stderr.write(`[service] ${line}\n`);
    });
    child.once('exit', (code) => reject(new Error(`the service exited before it was ready (code ${code})`)));
  });
}

function createCommander(child: ChildProcess) {
  let nextId = 1;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  child.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.ok) waiter?.resolve(reply.value);
    else waiter?.reject(new Error(reply.error));
  });
  child.once('exit', (code) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`the service exited (code ${code})`));
    pending.clear();
  });
  return <T>(name: string, args: Record<string, unknown> = {}) =>
    new Promise<T>((resolve, reject) => {
      const command: Command = { id: nextId++, name, args };
      pending.set(command.id, { resolve: resolve as (value: unknown) => void, reject });
      child.send(command);
    });
}

/** The bench's service process, `bench-serve.js` of the bench's build (bench/build.ts). */
export async function startServiceProcess(databaseUrl: string, buildDir: string): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []), join(buildDir, 'bench-serve.js')], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    const info = await readyLine(child);
    return {
      info,
      command: createCommander(child),
      async stop() {
        if (child.connected) child.disconnect();
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

/** Runs `use` with the bench's service (the build in `buildDir`) on a database of its own; stops it and drops the database afterwards. */
export function withBenchService<T>(buildDir: string, use: (service: ServiceProcess) => Promise<T>): Promise<T> {
  return withBenchDatabase(async (url) => {
    const service = await startServiceProcess(url, buildDir);
    try {
      return await use(service);
    } finally {
      await service.stop();
    }
  });
}
