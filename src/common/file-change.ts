/** One file a write tool changed: what was there before and after (sha256, null when absent). */
export interface FileChange {
  path: string;
  beforeSha256: string | null;
  afterSha256: string | null;
}
