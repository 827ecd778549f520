/**
 * A wake-up call inside one process: `notify()` tells each listener that there may be work,
 * not what; the listener goes and looks. It carries nothing, so a call no one hears is lost
 * harmlessly: whoever listens still polls, only less often.
 */
export type Signal = {
  notify(): void;
  /** Returns the call that stops listening. */
  listen(listener: () => void): () => void;
};

export function createSignal(): Signal {
  const listeners = new Set<() => void>();
  return {
    notify() {
      for (const listener of listeners) listener();
    },
    listen(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}
