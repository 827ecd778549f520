import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { PasskeyRow } from './mfa.repo.ts';

/**
 * WebAuthn through `@simplewebauthn/server`: this file fixes the policy (discoverable
 * credentials, user verification required, no attestation) and turns the library's throws
 * into "not verified". Challenges are stored and used once by the caller.
 */

/** The service as WebAuthn knows it: PUBLIC_URL's host is the RP ID, its origin the only origin. */
export type RelyingParty = { id: string; origin: string; name: string };

export function relyingPartyOf(publicUrl: string): RelyingParty {
  const url = new URL(publicUrl);
  return { id: url.hostname, origin: url.origin, name: 'Gatehouse' };
}

/**
 * Options as JSON, which is all they are on the wire. The library's types name browser buffer
 * types in extension fields, which the typed client would then carry to every frontend.
 */
export type WebAuthnOptionsJson = { challenge: string; [field: string]: unknown };

/** Answers older than this are refused: the challenge is gone. */
export const CHALLENGE_TTL_MS = 5 * 60_000;

const asTransports = (transports: string[]) => transports as AuthenticatorTransport[];

export async function registrationOptions(rp: RelyingParty, user: { handle: string; email: string; name: string }, existing: PasskeyRow[]): Promise<WebAuthnOptionsJson> {
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.name,
    userID: Buffer.from(user.handle, 'base64url'),
    timeout: CHALLENGE_TTL_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((passkey) => ({ id: passkey.credential_id, transports: asTransports(passkey.transports) })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  return options as unknown as WebAuthnOptionsJson;
}

export type NewCredential = { credentialId: string; publicKey: Buffer; counter: number; transports: string[] };

/** The new credential, or undefined when the attestation does not verify (wrong origin, challenge, no user verification). */
export async function verifyRegistration(rp: RelyingParty, response: RegistrationResponseJSON, challenge: string): Promise<NewCredential | undefined> {
  try {
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
    if (!result.verified) return undefined;
    const { credential } = result.registrationInfo;
    return {
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey),
      counter: credential.counter,
      transports: credential.transports ?? response.response.transports ?? [],
    };
  } catch {
    return undefined;
  }
}

/** Request options: any discoverable passkey of this site, or only `allowed` ones (a known account's second step). */
export async function authenticationOptions(rp: RelyingParty, allowed?: PasskeyRow[]): Promise<WebAuthnOptionsJson> {
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    timeout: CHALLENGE_TTL_MS,
    userVerification: 'required',
    allowCredentials: allowed?.map((passkey) => ({ id: passkey.credential_id, transports: asTransports(passkey.transports) })),
  });
  return options as unknown as WebAuthnOptionsJson;
}

/**
 * The authenticator's new counter, or undefined when the assertion does not verify: a wrong
 * signature, origin or challenge, no user verification, or a counter that did not move
 * forward (a cloned authenticator). `challenge` is one the caller issued and still holds.
 */
export async function verifyAssertion(rp: RelyingParty, response: AuthenticationResponseJSON, passkey: PasskeyRow, challenge: string): Promise<number | undefined> {
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
      credential: { id: passkey.credential_id, publicKey: new Uint8Array(passkey.public_key), counter: Number(passkey.counter), transports: asTransports(passkey.transports) },
    });
    return result.verified ? result.authenticationInfo.newCounter : undefined;
  } catch {
    return undefined;
  }
}

/** The challenge a response signed, read from its client data to find it among ours; undefined when unreadable. */
export function challengeOf(response: { response: { clientDataJSON: string } }): string | undefined {
  try {
    const client = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'));
    return typeof client?.challenge === 'string' ? client.challenge : undefined;
  } catch {
    return undefined;
  }
}
