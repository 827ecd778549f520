import { z } from 'zod';
import { strictInput } from '../../lib/validation.ts';
import { stepUpProof } from '../mfa/index.ts';

export const rotateApiKeyInput = strictInput({
  grace_seconds: z.number().int().min(0, 'must be 0 to 86400').max(86_400, 'must be 0 to 86400').optional().describe('How long the previous key keeps working (default 0: not at all)'),
  ...stepUpProof,
});
export const rotateApiKeyOutput = z.object({ success: z.literal(true), api_key: z.string() });
