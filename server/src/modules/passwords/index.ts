// The passwords module's face: the policy a new password meets, the check a signed-in caller
// passes before a sensitive change, and the worker's half of a reset. Nothing here may import
// the second factor (mfa/ builds on this face): a change by the owner (passwords.change.ts,
// which asks for it) stays behind it, with the procedures (passwords.router.ts, merged into
// auth.* by server/src/router.ts).
export { confirmPassword } from './passwords.check.ts';
export { PASSWORD_RATE_RULES } from './passwords.limits.ts';
export { checkNewPassword } from './passwords.policy.ts';
export { sendResetLink } from './passwords.reset.ts';
