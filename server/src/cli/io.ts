import { AsyncLocalStorage } from 'node:async_hooks';
import type { Deps } from '../index.ts';

// Where a command reads its settings and writes its output. The binary (admin.ts) runs a
// command with the process's own; a test runs it in process with strings to collect, so that
// a command need not cost a Node start. Held in an AsyncLocalStorage for the time of one
// command (runAdminCommand in program.ts) rather than passed through every function: any
// code the command awaits sees the same io, and two commands at once each see their own.

/** What the commands write to: a process's stdout or stderr, or anything that takes text. */
export type CliStream = {
  write(text: string): boolean | void;
  /** When write returned false: called once the stream takes more (audit export waits for it). */
  once?(event: 'drain', listener: () => void): unknown;
  /** A terminal: help is wrapped to its width, and a bulk job draws a progress bar on stderr. */
  isTTY?: boolean;
  columns?: number;
};

export type CliIo = {
  env: NodeJS.ProcessEnv;
  stdout: CliStream;
  stderr: CliStream;
  /**
   * A running service's dependencies, when it runs the command for a CLI beside it
   * (serve.ts): the command works on them, as one of the service's own callers, instead of
   * opening the database itself.
   */
  deps?: Deps;
};

type CliRun = { io: CliIo; exitCode?: number };

const current = new AsyncLocalStorage<CliRun>();

export const processIo = (): CliIo => ({ env: process.env, stdout: process.stdout, stderr: process.stderr });

/** The io of the command running now; the process's outside one. */
export function cliIo(): CliIo {
  return current.getStore()?.io ?? processIo();
}

/** Runs one command with `io`: its exit code is `work`'s, or if that is 0, what the command set with setExitCode. */
export async function runWithIo(io: CliIo, work: () => Promise<number>): Promise<number> {
  const run: CliRun = { io };
  const code = await current.run(run, work);
  return code !== 0 ? code : (run.exitCode ?? code);
}

/** A command that finished but must not exit 0 (secrets reencrypt with values it could not open). */
export function setExitCode(code: number): void {
  const run = current.getStore();
  if (run) run.exitCode = code;
  else process.exitCode = code;
}
