/** A provider's sign-in, as /login and /register offer it: a plain link, no script needed. */
export type ProviderLink = { label: string; href: string };

/** "Continue with {label}" for each identity provider; nothing when none is configured. */
export function ProviderLinks({ providers }: { providers?: ProviderLink[] }) {
  if (!providers?.length) return null;
  return (
    <div class="providers">
      <p class="divider">
        <span>or</span>
      </p>
      {providers.map((provider) => (
        <a class="button button-secondary button-block" href={provider.href}>
          Continue with {provider.label}
        </a>
      ))}
    </div>
  );
}
