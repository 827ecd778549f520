/** Lists return the most recent rows up to this many; the contract has no paging yet. */
export const LIST_LIMIT = 1000;
