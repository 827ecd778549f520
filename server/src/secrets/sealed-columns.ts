import type { SealedColumn } from '../lib/sealed-column.ts';
// Behind the faces, as tests/architecture.unit.test.ts allows this file alone: deps.ts checks
// DATA_KEY at start through this list, and the sites, channels and mfa faces name Deps, so through
// them the check would close an import cycle. The repos import nothing that does.
import { sealedApiKeys } from '../modules/accounts/accounts.repo.ts';
import { sealedBotTokens, sealedSecretTokens } from '../modules/channels/channels.repo.ts';
import { sealedEndpointSecrets, sealedPreviousEndpointSecrets } from '../modules/events/events.repo.ts';
import { sealedTotpSecrets } from '../modules/mfa/mfa.repo.ts';
import { sealedSiteSecrets } from '../modules/sites/sites.repo.ts';

/**
 * Every column that holds a sealed value (AES-GCM under DATA_KEY, lib/crypto.ts), each as its
 * owner's repo offers it: the statements stay with the table's owner. A value is bound to its
 * place, `<table>.<column>` and the row's key: the modules that write them name the same
 * places (accounts.repo.ts apiKeyPlace, sites.service.ts, channels.service.ts, mfa.proofs.ts totpPlace, events.signing.ts), and
 * tests/secrets.rotation.rest.test.ts seals through the modules and re-encrypts through this
 * list, so the two cannot drift apart unnoticed. A new sealed column goes here.
 */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  sealedApiKeys,
  sealedSiteSecrets,
  sealedBotTokens,
  sealedSecretTokens,
  sealedTotpSecrets,
  sealedEndpointSecrets,
  sealedPreviousEndpointSecrets,
];
