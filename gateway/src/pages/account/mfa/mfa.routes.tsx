import type Router from '@koa/router';
import type { Context as KoaContext } from 'koa';
import QRCode from 'qrcode';
import type { ErrorCode } from '../../../../../server/src/index.ts';
import type { AccountForm, AccountFormState, MfaStage } from '../account-types.ts';
import type { Notice } from '../../kit/components.tsx';
import { CODE_LABEL } from '../../kit/second-factor.view.tsx';
import type { AccountPages } from '../account-page.tsx';
import type { FormFields } from '../../kit/form-body.ts';
import { currentPassword, passkeyAnswer, stepUpProof, type PasskeyAttestation } from '../../kit/form-proofs.ts';
import type { PageKit } from '../../kit/kit.tsx';
import { formRefusal, PROOF_TEXTS, type FieldLabels } from '../../kit/refusals.ts';

const PROOF_LABELS = { password: 'Password', code: CODE_LABEL };
const ENABLE_LABELS = { code: 'Code from your authenticator app' };
const NAME_LABELS = { name: 'Name of the passkey' };
const WRONG_PASSWORD = 'The password is wrong. Nothing was changed.';

/** What the second factor's card says after a change it redirected from (`?done=…`): a fixed list, never echoed text. */
export const MFA_DONE_NOTICES: Record<string, AccountFormState> = {
  'totp-on': { name: 'totp', notice: { tone: 'success', text: 'The authenticator app is on. Signing in now asks for its code.' } },
  'totp-off': { name: 'totp', notice: { tone: 'success', text: 'The authenticator app is off.' } },
  'passkey-added': { name: 'passkeys', notice: { tone: 'success', text: 'Your passkey is added.' } },
  'passkey-removed': { name: 'passkeys', notice: { tone: 'success', text: 'The passkey is removed.' } },
};

/** The authenticator's new key as the card shows it: a QR code drawn here as SVG (the CSP allows no data: images), and the key as text. */
async function totpSetupStage(secret: string, otpauthUrl: string): Promise<MfaStage> {
  const qrSvg = await QRCode.toString(otpauthUrl, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return { kind: 'totp-setup', secret, otpauthUrl, qrSvg };
}

const OTPAUTH_SECRET = /^[A-Z2-7]{16,128}$/;

/**
 * After a wrong first code, the setup again, from the `otpauth://` URL its form carried, so
 * that a typo does not mean scanning a new code. Only a well-formed URL is drawn; it changes
 * nothing: turning the app on checks codes against the key the server keeps.
 */
async function setupAgain(text: string): Promise<MfaStage | undefined> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  const secret = url.searchParams.get('secret') ?? '';
  if (text.length > 512 || url.protocol !== 'otpauth:' || url.host !== 'totp' || !OTPAUTH_SECRET.test(secret)) return undefined;
  return totpSetupStage(secret, text);
}

type Refused = {
  name: AccountForm;
  labels: FieldLabels;
  texts: Partial<Record<ErrorCode, string>>;
  /** The passkey a row's form was about. */
  target?: string;
  /** The setup step to show again for this refusal, if any. */
  stage?: (code: ErrorCode) => Promise<MfaStage | undefined>;
};

/** A form of the card refused: the page again, the message in its section, the fields it names marked. */
async function showRefusal(ctx: KoaContext, pages: AccountPages, error: unknown, form: FormFields, refused: Refused): Promise<void> {
  if (pages.signedOut(ctx, error)) return;
  const refusal = formRefusal(ctx, error, form, refused.labels, refused.texts);
  const mfaStage = refused.stage ? await refused.stage(refusal.code) : undefined;
  await pages.show(ctx, refusal.status, { mfaStage, refused: { name: refused.name, form: refusal.form, notice: refusal.notice, target: refused.target } });
}

function mountTotp(router: Router, kit: PageKit, pages: AccountPages): void {
  kit.post(router, '/account/mfa/totp/setup', async (ctx, form) => {
    try {
      const setup = await kit.call(ctx).auth.setupTotp({ password: currentPassword(form), ...stepUpProof(form) });
      await pages.show(ctx, 200, { mfaStage: await totpSetupStage(setup.secret, setup.otpauth_url) });
    } catch (error) {
      const texts = { INVALID_CREDENTIALS: WRONG_PASSWORD, CONFLICT: 'The authenticator app is already on.', ...PROOF_TEXTS };
      await showRefusal(ctx, pages, error, form, { name: 'totp', labels: PROOF_LABELS, texts });
    }
  });
  kit.post(router, '/account/mfa/totp/enable', async (ctx, form) => {
    try {
      const { recovery_codes: codes } = await kit.call(ctx).auth.enableTotp({ code: form.text('code') });
      // An account with a passkey keeps the recovery codes it has.
      if (!codes.length) return kit.redirect(ctx, '/account?done=totp-on#mfa');
      await pages.show(ctx, 200, { mfaStage: { kind: 'recovery-codes', codes, done: 'The authenticator app is on. Signing in now asks for its code.' } });
    } catch (error) {
      const texts = { INVALID_CODE: 'That is not the code the app shows now. Check that the entry is the one for Gatehouse, and type its newest code.', CONFLICT: 'The authenticator app is already on.' };
      const stage = async (code: ErrorCode) => (code === 'INVALID_CODE' || code === 'VALIDATION_FAILED' ? setupAgain(form.text('otpauth_url')) : undefined);
      await showRefusal(ctx, pages, error, form, { name: 'totp', labels: ENABLE_LABELS, texts, stage });
    }
  });
  kit.post(router, '/account/mfa/totp/disable', async (ctx, form) => {
    try {
      await kit.call(ctx).auth.disableTotp({ password: currentPassword(form), code: form.text('code') });
      kit.redirect(ctx, '/account?done=totp-off#mfa');
    } catch (error) {
      const texts = { INVALID_CREDENTIALS: WRONG_PASSWORD, CONFLICT: 'The authenticator app is already off.', INVALID_CODE: PROOF_TEXTS.INVALID_CODE };
      await showRefusal(ctx, pages, error, form, { name: 'totp', labels: PROOF_LABELS, texts });
    }
  });
}

function mountRecoveryCodes(router: Router, kit: PageKit, pages: AccountPages): void {
  kit.post(router, '/account/mfa/recovery-codes', async (ctx, form) => {
    try {
      const { recovery_codes: codes } = await kit.call(ctx).auth.regenerateRecoveryCodes({ password: currentPassword(form), ...stepUpProof(form) });
      await pages.show(ctx, 200, { mfaStage: { kind: 'recovery-codes', codes, done: 'New recovery codes are made: the older ones no longer work.' } });
    } catch (error) {
      const texts = { INVALID_CREDENTIALS: WRONG_PASSWORD, CONFLICT: 'Recovery codes come with a second factor: turn one on first.', ...PROOF_TEXTS };
      await showRefusal(ctx, pages, error, form, { name: 'recovery', labels: PROOF_LABELS, texts });
    }
  });
}

const NO_PASSKEY_MADE: Notice = { tone: 'error', text: 'No passkey was made: this browser sent none (it needs JavaScript for it). Start again.' };

function mountPasskeys(router: Router, kit: PageKit, pages: AccountPages): void {
  kit.post(router, '/account/mfa/passkeys/options', async (ctx, form) => {
    try {
      const { options } = await kit.call(ctx).auth.passkeyOptions({ password: currentPassword(form), ...stepUpProof(form) });
      await pages.show(ctx, 200, { mfaStage: { kind: 'passkey-finish', options: JSON.stringify(options) } });
    } catch (error) {
      await showRefusal(ctx, pages, error, form, { name: 'passkeys', labels: PROOF_LABELS, texts: { INVALID_CREDENTIALS: WRONG_PASSWORD, ...PROOF_TEXTS } });
    }
  });
  kit.post(router, '/account/mfa/passkeys', async (ctx, form) => {
    const response = passkeyAnswer<PasskeyAttestation>(form);
    if (response === undefined) return pages.show(ctx, 400, { refused: { name: 'passkeys', notice: NO_PASSKEY_MADE } });
    try {
      const name = form.text('name').trim();
      const added = await kit.call(ctx).auth.addPasskey({ response, ...(name ? { name } : {}) });
      if (!added.recovery_codes) return kit.redirect(ctx, '/account?done=passkey-added#mfa');
      await pages.show(ctx, 200, { mfaStage: { kind: 'recovery-codes', codes: added.recovery_codes, done: `Your passkey “${added.passkey.name}” is added.` } });
    } catch (error) {
      const texts = { INVALID_CODE: 'The passkey could not be checked, or its options ran out. Start again.' };
      await showRefusal(ctx, pages, error, form, { name: 'passkeys', labels: NAME_LABELS, texts });
    }
  });
  kit.post(router, '/account/mfa/passkeys/remove', async (ctx, form) => {
    const id = form.text('passkey_id');
    try {
      await kit.call(ctx).auth.removePasskey({ id, password: currentPassword(form), ...stepUpProof(form) });
      kit.redirect(ctx, '/account?done=passkey-removed#mfa');
    } catch (error) {
      const texts = { INVALID_CREDENTIALS: WRONG_PASSWORD, NOT_FOUND: 'That passkey was already removed.', ...PROOF_TEXTS };
      await showRefusal(ctx, pages, error, form, { name: 'passkeys', labels: PROOF_LABELS, texts, target: id || undefined });
    }
  });
}

/**
 * The "Two-factor authentication" card's forms: the authenticator app (set up, turn on with a
 * first code, turn off), recovery codes, passkeys (options, then the browser's answer; remove).
 * Secrets (the new key, recovery codes) are only ever in the answer to the POST that made them.
 */
export function mountMfaForms(router: Router, kit: PageKit, pages: AccountPages): void {
  mountTotp(router, kit, pages);
  mountRecoveryCodes(router, kit, pages);
  mountPasskeys(router, kit, pages);
}
