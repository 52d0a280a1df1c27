/**
 * The namespace owner refused an operator's request (switch to an unknown or incomplete namespace,
 * drop the active one): the message is for the operator, nothing was changed.
 */
export class NamespaceRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = NamespaceRefusedError.name;
  }
}
