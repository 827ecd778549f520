import { Layout } from './layout.tsx';

export type Problem = { title: string; text: string; back?: { href: string; label: string } };

/** A request the page could not act on: what went wrong, that nothing changed, and a way on. */
export function ProblemPage({ problem }: { problem: Problem }) {
  const back = problem.back ?? { href: '/account', label: 'Go to your account' };
  return (
    <Layout title={problem.title}>
      <div class="card">
        <h1>{problem.title}</h1>
        <p>{problem.text}</p>
        <a class="button button-secondary" href={back.href}>
          {back.label}
        </a>
      </div>
    </Layout>
  );
}
