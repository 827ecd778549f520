import { Alert } from './components.tsx';
import { Layout } from './layout.tsx';

/** A finished step with one way on: "Password changed" and a link to sign in. */
export function DonePage({ title, text, next }: { title: string; text: string; next: { href: string; label: string } }) {
  return (
    <Layout title={title}>
      <div class="card">
        <h1>{title}</h1>
        <Alert tone="success">
          <p>{text}</p>
        </Alert>
        <a class="button button-block" href={next.href}>
          {next.label}
        </a>
      </div>
    </Layout>
  );
}
