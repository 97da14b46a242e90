// The few parts of oidc-provider (no type declarations of its own) the single sign-on tests use.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface KoaContext {
    path: string;
    body: unknown;
  }

  interface Account {
    accountId: string;
    claims(): Promise<Record<string, unknown>>;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    use(middleware: (context: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    on(event: string, listener: (...parameters: unknown[]) => void): void;
  }
  export type { Account, KoaContext };
}
