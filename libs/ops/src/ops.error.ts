/**
 * A command that cannot do what was asked, with a message for the operator. `usage` marks a
 * problem with what was given (exit 2: a file that is not a valid policy set, an existing
 * namespace); otherwise the command failed or refused (exit 1).
 */
export class OpsError extends Error {
  constructor(
    message: string,
    readonly usage = false,
  ) {
    super(message);
    this.name = OpsError.name;
  }
}
