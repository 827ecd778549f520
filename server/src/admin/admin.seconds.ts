/** Whole seconds from `then` to `now`, never below 0 (clocks of two machines disagree a little); null for no time. */
export const secondsSince = (now: Date, then: Date | null | undefined) => (then ? Math.max(0, Math.floor((now.getTime() - then.getTime()) / 1000)) : null);
