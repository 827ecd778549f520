// The identities module's face: the account's links to identity providers as the other
// modules see them (the passwords module names a provider to re-authenticate with), and
// where a sign-in with a provider starts. It owns `identities` (identities.model.ts, every
// statement in identities.repo.ts). Nothing here may import the second factor or the
// passwords module (both build on this face): the sign-in itself (identities.flow.ts) and the
// procedures (identities.router.ts) reach the server through server/src/router.ts. The
// second step of a provider's sign-in (sessions' loginSecondStep) links the provider that
// its first step left waiting.
export { identitiesTable, linkTicketsTable } from './identities.model.ts';
export { linkAfterSecondStep } from './identities.link.ts';
export { startUrl } from './identities.providers.ts';
export { identitiesOf, linkedProviders, purgeExpiredLinkTickets } from './identities.repo.ts';
