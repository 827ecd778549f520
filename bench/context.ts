import type { LoadOptions } from './load.ts';
import type { Measurement } from './measurement.ts';
import type { ServiceProcess } from './service-process.ts';

/** What a scenario is given to measure with: the bench's service, the run's times, and load at the run's defaults. */
export type BenchContext = {
  service: ServiceProcess;
  durationSeconds: number;
  warmupSeconds: number;
  /** Load with the run's defaults: CONNECTIONS, duration and warm-up. */
  load(options: Partial<LoadOptions> & Pick<LoadOptions, 'url'>): Promise<Measurement>;
};
