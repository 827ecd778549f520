/**
 * The router as a client sees it: every procedure's input and output, and the error shape,
 * as plain types. The server's `AppRouter` carries its context (`Deps`: Sequelize, pg-boss,
 * pino, …) and its procedures' meta and schemas (zod, trpc-to-openapi), none of which a
 * frontend should type-check or install.
 */
import type {
  AnyTRPCProcedure,
  inferRouterInputs,
  inferRouterOutputs,
  TRPCBuiltRouter,
  TRPCMutationProcedure,
  TRPCQueryProcedure,
  TRPCSubscriptionProcedure,
} from '@trpc/server';

/**
 * Only ever used for its return type. The types are declared inside the function on purpose:
 * a declaration file cannot name them, so declaration emit writes out what they resolve to
 * (`{ email: string; … }`) instead of `z.infer<…>` or the server's types, and the package's
 * `index.d.ts` needs nothing but @trpc/*.
 */
function clientView() {
  // An import() type: an import statement of the server's router would stay in the declarations.
  type ServerRouter = import('../../server/src/router.ts').AppRouter;
  type ServerRoot = ServerRouter['_def']['_config']['$types'];

  // Renaming each key to itself cuts the link from a property to its server-side declaration;
  // with the link, declaration emit may print that declaration's type (`ErrorIssue[]`, an
  // import of a server file) instead of the plain one. Optional and readonly stay.
  type SameKey<K> = K extends string ? `${K}` : K;
  type Plain<T> = T extends readonly (infer E)[]
    ? Plain<E>[]
    : T extends object
      ? { [K in keyof T as SameKey<K>]: Plain<T[K]> }
      : T;

  type Def<P extends AnyTRPCProcedure> = {
    input: Plain<P['_def']['$types']['input']>;
    output: Plain<P['_def']['$types']['output']>;
    meta: object;
  };
  type Procedures<R> = {
    [K in keyof R]: R[K] extends AnyTRPCProcedure
      ? R[K]['_def']['type'] extends 'query'
        ? TRPCQueryProcedure<Def<R[K]>>
        : R[K]['_def']['type'] extends 'mutation'
          ? TRPCMutationProcedure<Def<R[K]>>
          : TRPCSubscriptionProcedure<Def<R[K]>>
      : Procedures<R[K]>;
  };

  type View = {
    root: { ctx: object; meta: object; errorShape: Plain<ServerRoot['errorShape']>; transformer: ServerRoot['transformer'] };
    procedures: Procedures<ServerRouter['_def']['record']>;
  };

  // The view must not change what a caller may send or gets back: if Plain ever mangles a
  // type (a Date, a function), this stops the type check here rather than in a frontend.
  type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
  type Client = TRPCBuiltRouter<View['root'], View['procedures']>;
  true satisfies Same<inferRouterInputs<Client>, inferRouterInputs<ServerRouter>>;
  true satisfies Same<inferRouterOutputs<Client>, inferRouterOutputs<ServerRouter>>;
  true satisfies Same<View['root']['errorShape'], ServerRoot['errorShape']>;

  return undefined as unknown as View;
}

type ClientView = ReturnType<typeof clientView>;

export type AppRouter = TRPCBuiltRouter<ClientView['root'], ClientView['procedures']>;
