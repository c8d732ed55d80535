/**
 * Base of every error the domain raises on purpose. A stable `code` lets the
 * edge (HTTP, worker) decide what to answer; the domain never knows statuses.
 */
export abstract class DomainError extends Error {
  abstract readonly code: string;
  /** Payload that may be shown to the client (e.g. the attach-files result). */
  readonly details: unknown = null;

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}
