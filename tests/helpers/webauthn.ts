import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';

// A software authenticator that speaks WebAuthn as a platform authenticator does: ES256 keys,
// `none` attestation, user presence and verification flags, a signature counter. The REST
// tests use it where no browser runs; the browser tests use Chromium's own virtual one.

type Credential = { id: string; privateKey: KeyObject; userHandle: string; counter: number };

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

const b64url = (bytes: Buffer | Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const uint32 = (value: number) => {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
};

/** The COSE_Key of an EC2 P-256 public key (RFC 9053): kty 2, alg -7 (ES256), crv 1, x, y. */
function coseKey(privateKey: KeyObject): Uint8Array {
  const { x, y } = privateKey.export({ format: 'jwk' }) as { x: string; y: string };
  return isoCBOR.encode(
    new Map<number, number | Uint8Array>([
      [1, 2],
      [3, -7],
      [-1, 1],
      [-2, Buffer.from(x, 'base64url')],
      [-3, Buffer.from(y, 'base64url')],
    ]),
  );
}

export type Gesture = {
  /** The page's origin as the browser would report it; the service's own by default. */
  origin?: string;
  /** Whether the person was verified (PIN, biometrics); a passkey sign-in requires it. */
  verified?: boolean;
};

export function createSoftAuthenticator(defaultOrigin: string) {
  const credentials = new Map<string, Credential>();
  const clientData = (type: string, challenge: string, origin: string) => Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  const flags = (gesture: Gesture, extra = 0) => Buffer.from([FLAG_UP | (gesture.verified === false ? 0 : FLAG_UV) | extra]);

  return {
    credentials,
    /** navigator.credentials.create(): a new resident credential for these options. */
    register(options: PublicKeyCredentialCreationOptionsJSON, gesture: Gesture = {}): RegistrationResponseJSON {
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const id = b64url(randomBytes(32));
      credentials.set(id, { id, privateKey, userHandle: options.user.id, counter: 0 });
      const credentialId = Buffer.from(id, 'base64url');
      const authData = Buffer.concat([
        sha256(options.rp.id ?? new URL(defaultOrigin).hostname),
        flags(gesture, FLAG_AT),
        uint32(0),
        Buffer.alloc(16),
        Buffer.from([credentialId.length >> 8, credentialId.length & 0xff]),
        credentialId,
        coseKey(privateKey),
      ]);
      const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', new Uint8Array(authData)]]) as never);
      return {
        id,
        rawId: id,
        type: 'public-key',
        response: {
          clientDataJSON: b64url(clientData('webauthn.create', options.challenge, gesture.origin ?? defaultOrigin)),
          attestationObject: b64url(attestationObject),
          transports: ['internal'],
        },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      };
    },
    /**
     * navigator.credentials.get(): an assertion by `credentialId`, or by the first credential
     * the options allow (any, for a discoverable sign-in). The counter moves up by one.
     */
    authenticate(options: PublicKeyCredentialRequestOptionsJSON, gesture: Gesture & { credentialId?: string } = {}): AuthenticationResponseJSON {
      const allowed = options.allowCredentials?.map((entry) => entry.id);
      const id = gesture.credentialId ?? [...credentials.keys()].find((candidate) => !allowed?.length || allowed.includes(candidate));
      const credential = id ? credentials.get(id) : undefined;
      if (!credential) throw new Error('the authenticator holds no credential these options allow');
      credential.counter += 1;
      const authenticatorData = Buffer.concat([sha256(options.rpId ?? new URL(defaultOrigin).hostname), flags(gesture), uint32(credential.counter)]);
      const clientDataJSON = clientData('webauthn.get', options.challenge, gesture.origin ?? defaultOrigin);
      const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), credential.privateKey);
      return {
        id: credential.id,
        rawId: credential.id,
        type: 'public-key',
        response: { clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authenticatorData), signature: b64url(signature), userHandle: credential.userHandle },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      };
    },
  };
}

export type SoftAuthenticator = ReturnType<typeof createSoftAuthenticator>;
