import { DateTime } from 'luxon';
import type { FieldErrors } from '../../shared/common.errors.js';

/** 10 MiB: exactly this many bytes are accepted, one more is not. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;

/** A file part as the edge received it: bytes kept in a local file, counted and hashed. */
export interface ReceivedFile {
  /** Zero-based position among the request's file parts. */
  index: number;
  /** The client's base name, without directory parts or control characters. */
  name: string;
  /** Bytes received; MAX_FILE_BYTES + 1 means "more than allowed" (the rest was not kept). */
  size: number;
  /** Sniffed from the bytes, never taken from the client. */
  contentType: string;
  sha256: string;
  /** The bytes in a local file; empty when they went to storage as they arrived (`written`). */
  localPath: string;
  /** The object written while the request was read (ADR 0056), at a key the use case made. */
  written?: EarlyWrite;
}

/** A file's object written during the read, at `storageKey`; `done` settles once it is whole (or failed). */
export interface EarlyWrite {
  /** The id in `storageKey` (`orders/<directory>/<order>/<id>`). */
  id: string;
  storageKey: string;
  done: Promise<void>;
  /** Leaves no object and no incomplete upload behind; never throws. */
  discard(): Promise<void>;
}

/** Where an upload's file may be written while the request is read: the next key of the order (ADR 0056). */
export type NewFileKey = () => { id: string; storageKey: string };

export interface ReceivedUpload {
  files: ReceivedFile[];
  /** The raw `category_id` part, if sent once. */
  categoryId: string | undefined;
  /** Problems the edge found while reading the body (too many files, a field sent twice). */
  errors: FieldErrors;
}

/**
 * Characters a name loses besides the C0 and C1 controls: the bidirectional
 * controls (embeddings, overrides, isolates, marks: `invoice\u202Etxt.exe`
 * reads as `invoiceexe.txt`), the zero-width ones (spaces, joiners, the word
 * joiner, the BOM) that make two names look alike, and the line and paragraph
 * separators.
 */
const INVISIBLE_CONTROLS = /[\u061c\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff]/g;

/**
 * The client's file name reduced to its base name: no directory parts, no
 * control, bidirectional or zero-width characters, in Unicode NFC (so `é`
 * sent decomposed, as macOS does, is stored as the one character); never used
 * to build storage keys.
 */
export function baseFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  // eslint-disable-next-line no-control-regex -- control characters are what a stored file name loses
  const clean = base.replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
  const visible = clean.replace(INVISIBLE_CONTROLS, '').normalize('NFC').trim();
  const limited = [...visible].slice(0, 255).join('');
  return limited === '' || limited === '.' || limited === '..' ? 'file' : limited;
}

/** Per-file rules, in field order; an empty result means the files may be stored. */
export function validateFiles(files: ReceivedFile[], maxFiles: number): FieldErrors {
  const errors: FieldErrors = {};
  if (files.length > maxFiles) errors.files = [`The files field must not have more than ${maxFiles} items.`];
  for (const file of files) {
    const field = `files.${file.index}`;
    if (file.size === 0) errors[field] = [`The ${field} field must not be an empty file.`];
    else if (file.size > MAX_FILE_BYTES) errors[field] = [`The ${field} field must not be greater than ${MAX_FILE_BYTES / 1024} kilobytes.`];
  }
  return errors;
}

/**
 * `category_id`: absent, empty or `null` (any case) means none. A whole number
 * below 1 is well-formed but can never name a category, so it is "invalid"
 * like an unknown id; anything that is not a whole number is not an integer.
 */
export function parseCategoryId(raw: string | undefined): { id: number | null } | { error: string } {
  const value = raw?.trim();
  if (value === undefined || value === '' || value.toLowerCase() === 'null') return { id: null };
  if (!/^-?\d{1,15}$/.test(value)) return { error: 'The category_id field must be an integer.' };
  if (Number(value) < 1) return { error: 'The selected category_id is invalid.' };
  return { id: Number(value) };
}

/** The calendar day (YYYY-MM-DD in `timeZone`, APP_TIMEZONE) whose UPLOAD_QUOTA_MB_PER_DAY an upload at `now` counts against. */
export function quotaDay(now: Date, timeZone: string): string {
  return DateTime.fromJSDate(now, { zone: timeZone }).toISODate()!;
}

/**
 * The files of a request that take from the daily quota, in request order:
 * bytes the order already has, and a later part repeating an earlier one's
 * bytes, store nothing new and count nothing.
 */
export function filesCountedByQuota(files: readonly ReceivedFile[], attachedSha256: ReadonlySet<string>): ReceivedFile[] {
  const seen = new Set<string>();
  return files.filter((file) => {
    if (attachedSha256.has(file.sha256) || seen.has(file.sha256)) return false;
    seen.add(file.sha256);
    return true;
  });
}
