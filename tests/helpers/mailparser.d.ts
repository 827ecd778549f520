// mailparser ships no types and @types/mailparser is not installed: what the SMTP helper uses.
declare module 'mailparser' {
  import type { Readable } from 'node:stream';

  export type EmailAddress = { address?: string; name: string };
  export type AddressObject = { value: EmailAddress[]; text: string; html: string };
  export type ParsedMail = {
    to?: AddressObject | AddressObject[];
    from?: AddressObject;
    subject?: string;
    text?: string;
    html: string | false;
    messageId?: string;
    date?: Date;
    headers: Map<string, unknown>;
  };

  export function simpleParser(source: Readable | Buffer | string): Promise<ParsedMail>;
}
