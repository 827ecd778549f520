import type Router from '@koa/router';
import type { OpenAPIObject } from 'openapi3-ts/oas31';
import type { Deps } from '../../../server/src/index.ts';
import { errorResponse } from './openapi-document.ts';

export const JWKS_PATH = '/.well-known/jwks.json';

/**
 * How long a service may keep the key set. A rotation publishes a new key at least this
 * long before it signs (docs/DEPLOY.md, Rotating secrets), so a service that fetched the set
 * just before never meets a token whose key it lacks.
 */
export const JWKS_MAX_AGE_SECONDS = 300;

/**
 * GET /.well-known/jwks.json: the public keys access tokens are checked with (docs/ACCESS-TOKENS.md),
 * the same for everyone, so any cache may keep it and any origin may read it. `{keys: []}`
 * when there are none: a service that asks before tokens are enabled gets a set, not an error.
 */
export function mountJwks(router: Router, deps: Deps): void {
  const body = JSON.stringify(deps.accessTokens.jwks);
  router.get(JWKS_PATH, (ctx) => {
    ctx.set('Cache-Control', `public, max-age=${JWKS_MAX_AGE_SECONDS}`);
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.type = 'json';
    ctx.body = body;
  });
}

const KEY_SCHEMA = {
  type: 'object',
  required: ['kty', 'crv', 'x', 'kid', 'alg', 'use'],
  properties: {
    kty: { type: 'string', enum: ['OKP', 'EC'], description: '`OKP` for an Ed25519 key, `EC` for a P-256 one' },
    crv: { type: 'string', enum: ['Ed25519', 'P-256'] },
    x: { type: 'string', description: 'The public key (base64url)' },
    y: { type: 'string', description: 'P-256 keys only: the public point\'s y (base64url)' },
    kid: { type: 'string', description: "The key's RFC 7638 thumbprint (SHA-256, base64url): the `kid` of the tokens it signs" },
    alg: { type: 'string', enum: ['EdDSA', 'ES256'] },
    use: { type: 'string', enum: ['sig'] },
  },
};

const EXAMPLE = { keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'RdKw5ScIGV-zoE0uVtXZAga255mpY5_cfnVuGsPOpGI', kid: 'x7dCS0FBUn_JEhUbV7IphRFQeLMdc9DWCX3XYly9WJQ', alg: 'EdDSA', use: 'sig' }] };

function jwksOperation(publicUrl: string): Record<string, unknown> {
  return {
    operationId: 'jwks',
    tags: ['auth'],
    summary: 'The public keys that access tokens (POST /auth/token) are checked with',
    description:
      'A JSON Web Key Set (RFC 7517): every published key, public halves only, the signing key first. A key is published before it signs ' +
      'and stays after it stops, so a service that keeps the set for its `max-age` never meets a token it cannot check. ' +
      'See [docs/ACCESS-TOKENS.md](ACCESS-TOKENS.md).',
    // Beside /api/v1, at the root of PUBLIC_URL, where a JWKS is looked for.
    servers: [{ url: publicUrl, description: 'This Gatehouse (PUBLIC_URL): the key set is not under /api/v1' }],
    security: [],
    responses: {
      '200': {
        description: '`{keys: []}` when there are no keys. Cached for 300 s (`Cache-Control: public, max-age=300`), readable from any origin.',
        headers: { 'Cache-Control': { description: '`public, max-age=300`', schema: { type: 'string' } } },
        content: {
          'application/json': {
            schema: { type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: KEY_SCHEMA } } },
            example: EXAMPLE,
          },
        },
      },
      '400': errorResponse(400, 'A control character in the path or a header value, as on every route', { codes: ['VALIDATION_FAILED'] }),
      '500': errorResponse(500, 'Unexpected failure on our side; the body carries no detail', { codes: ['INTERNAL_ERROR'] }),
    },
  };
}

/** The published document with the key set's route, which is no procedure (see mountJwks). */
export function withJwksRoute(document: OpenAPIObject, publicUrl: string): OpenAPIObject {
  return { ...document, paths: { ...document.paths, [JWKS_PATH]: { get: jwksOperation(publicUrl) } } };
}
