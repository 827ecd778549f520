/**
 * Runs `step` until a step handles fewer than `batchSize` rows, and returns the total:
 * big deletes and updates as many short statements, none holding its locks for long.
 */
export async function inBatches(step: () => Promise<number>, batchSize: number, onProgress?: (total: number) => void): Promise<number> {
  let total = 0;
  for (;;) {
    const handled = await step();
    total += handled;
    onProgress?.(total);
    if (handled < batchSize) return total;
  }
}
