import { currentPasswordSchema, emailSchema, passwordSchema, strictInput, tokenSchema } from '../../lib/validation.ts';
import { stepUpProof } from '../mfa/index.ts';

export const forgotPasswordInput = strictInput({ email: emailSchema });
export const resetPasswordInput = strictInput({ token: tokenSchema, password: passwordSchema });
export const changePasswordInput = strictInput({ current_password: currentPasswordSchema.optional(), new_password: passwordSchema, ...stepUpProof });
