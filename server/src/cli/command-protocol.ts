import type { Socket } from 'node:net';

// What the CLI and a running service say over the admin socket (service-socket.ts), one JSON
// document a line: the CLI asks once, the service answers with what the command writes, as
// it writes it, and then its exit code.

export type StreamTraits = { isTTY: boolean; columns?: number };

/** The CLI's request: the command's words, and what its stdout and stderr are (help wraps, a bar is drawn on a terminal). */
export type CommandRequest = { args: string[]; stdout: StreamTraits; stderr: StreamTraits };

/** The service's answer, line by line: text for stdout or stderr, then the exit code, last. */
export type CommandFrame = { out: string } | { err: string } | { exit: number };

/** The most a request may be: a command line, not a payload. */
export const MAX_REQUEST_BYTES = 256 * 1024;

export const frameLine = (frame: CommandFrame | CommandRequest) => `${JSON.stringify(frame)}\n`;

/**
 * Calls `onLine` with each whole line that arrives on `socket` (JSON never holds a raw
 * newline); `limit` bounds a line, and a longer one is an error.
 */
export function readLines(socket: Socket, onLine: (line: string) => void, limit = Infinity): void {
  let pending = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n')) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      onLine(line);
    }
    if (pending.length > limit) socket.destroy(new Error('line too long'));
  });
}

/** The request as it must be, or undefined: a service runs nothing it cannot read. */
export function parseRequest(line: string): CommandRequest | undefined {
  try {
    const request = JSON.parse(line) as CommandRequest;
    const traits = (value: StreamTraits | undefined) =>
      typeof value?.isTTY === 'boolean' && (value.columns === undefined || (Number.isInteger(value.columns) && value.columns > 0 && value.columns < 10_000));
    const words = Array.isArray(request?.args) && request.args.length <= 1000 && request.args.every((arg) => typeof arg === 'string');
    return words && traits(request.stdout) && traits(request.stderr) ? request : undefined;
  } catch {
    return undefined;
  }
}
