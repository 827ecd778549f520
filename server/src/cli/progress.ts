import cliProgress from 'cli-progress';
import { cliIo } from './io.ts';

export type OnProgress = (done: number) => void;

/**
 * A bar on stderr while a bulk job runs, for a person watching a terminal. `estimate` is an
 * upper bound (the rows in the chosen states, before any time filter): the bar grows past it
 * if needed and is set to the true total at the end, so it always finishes full.
 */
export async function withProgressBar<T>(label: string, estimate: () => Promise<number>, work: (onProgress: OnProgress) => Promise<T>): Promise<T> {
  const bar = new cliProgress.SingleBar(
    // Drawn only on a terminal (wantsProgressBar): the process's stderr, or one like it.
    { stream: cliIo().stderr as NodeJS.WritableStream, format: `${label} [{bar}] {value}/{total}`, hideCursor: true, clearOnComplete: false },
    cliProgress.Presets.shades_classic,
  );
  let done = 0;
  bar.start(Math.max(1, await estimate()), 0);
  try {
    const result = await work((total) => {
      done = total;
      if (done > bar.getTotal()) bar.setTotal(done);
      bar.update(done);
    });
    bar.setTotal(Math.max(1, done));
    bar.update(done);
    return result;
  } finally {
    bar.stop();
  }
}

/** Only where a person sees it: never into a pipe or a log file, never around JSON output. */
export function wantsProgressBar(options: { json?: boolean }): boolean {
  return Boolean(cliIo().stderr.isTTY) && !options.json;
}
