/** A member written into an archive: its size and SHA-256 (lower-case hex). */
export interface ArchiveMember {
  path: string;
  size: number;
  sha256: string;
}

/** A finished archive in a local temporary file, with its size and SHA-256 computed while it was written. */
export interface FinishedArchive {
  localPath: string;
  size: number;
  sha256: string;
}

/**
 * One archive being written, member by member, straight to a temporary file: memory stays bounded whatever the
 * archive's size (`add` resolves once the member is on its way to disk).
 */
export interface ArchiveBuilder {
  add(path: string, data: Buffer | string): Promise<ArchiveMember>;
  finish(): Promise<FinishedArchive>;
  /** Removes the temporary file (finished or not); safe to call more than once. */
  discard(): Promise<void>;
}

/** Makes ZIP archives of exports. */
export interface ExportArchivePort {
  /** A new archive staged for this attempt of the export (its temporary file is named after both). */
  create(owner: { exportId: number; attempt: number }): Promise<ArchiveBuilder>;
  /**
   * Removes staged archives whose attempt `isRunning` says is over (a runner killed mid-export leaves its file), and
   * staged files of unknown owner older than an hour; how many were removed.
   */
  sweep(isRunning: (exportId: number, attempt: number) => Promise<boolean>): Promise<number>;
}
