/** Lists return the most recent rows up to this many; the API has no paging for them yet. */
export const LIST_LIMIT = 1000;
