// The API keys' face: how a key is looked up (its hashes, keyed with DATA_KEY), for sessions/
// to find the caller, accounts/ to store a new account's key and `secrets reencrypt` to
// rewrite them; and the housekeeping of previous keys. The key's columns are in the accounts
// table: accounts/ writes them for this module and names the place its sealed copy is bound
// to (apiKeyPlace). Rotation (keys.service.ts, which needs the second factor) stays behind
// this face, and its procedure (keys.router.ts) is merged into auth.* by server/src/router.ts.
export { apiKeyHash, apiKeyLookupHashes, dropExpiredPreviousKeys } from './keys.storage.ts';
