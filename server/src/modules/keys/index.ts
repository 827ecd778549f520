// The API keys' face: how a key is stored (its lookup hashes and where its sealed copy
// lives), for sessions/ to find the caller, accounts/ to seal a new account's key and
// `secrets reencrypt` to rewrite them; and the housekeeping of previous keys. The key's
// columns are in the accounts table: accounts/ writes them for this module. Rotation
// (keys.service.ts, which needs the second factor) stays behind this face, and its procedure
// (keys.router.ts) is merged into auth.* by server/src/router.ts.
export { apiKeyHash, apiKeyLookupHashes, apiKeyPlace, dropExpiredPreviousKeys } from './keys.storage.ts';
