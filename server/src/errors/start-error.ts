/**
 * A start that cannot go on, for a reason the operator can fix: `variable` names the
 * setting to look at. The entry points print it as one line and exit 1 (docs/OPERATIONS.md, Troubleshooting).
 */
export class StartError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'StartError';
  }
}
