// The access tokens' face: how a sign-in becomes an access token's `amr`. Its procedure
// (tokens.router.ts) is merged into auth.* by server/src/router.ts; the signer and its keys
// are a dependency (lib/access-tokens.ts, deps.accessTokens), which the gateway's JWKS route
// publishes.
export { amrOf, CLIENT_ID } from './tokens.service.ts';
