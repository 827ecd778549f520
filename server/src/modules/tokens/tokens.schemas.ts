import { z } from 'zod';
import { strictInput } from '../../lib/validation.ts';

export const accessTokenInput = strictInput({
  audience: z.string().min(1).max(200, 'must be at most 200 characters').describe('The service the token is for: one of ACCESS_TOKEN_AUDIENCES (its `aud`)'),
});

export const accessTokenOutput = z.object({
  success: z.literal(true),
  access_token: z.string().describe('A JWT (RFC 9068, `typ: at+jwt`) signed with a key of GET /.well-known/jwks.json'),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int().describe('Seconds it is valid for (ACCESS_TOKEN_TTL)'),
});
