import { ToolError } from '../tool';

export interface HunkLine {
  op: ' ' | '-' | '+';
  text: string;
  /** Followed by "\ No newline at end of file". */
  noNewline: boolean;
}

export interface PatchHunk {
  /** 1-based; null for a bare "@@" header, which is then placed by its context alone. */
  oldStart: number | null;
  oldLines: number | null;
  newLines: number | null;
  header: string;
  lines: HunkLine[];
}

export interface FilePatch {
  /** Workspace-relative; null for /dev/null (the file is created). */
  oldPath: string | null;
  /** Workspace-relative; null for /dev/null (the file is deleted). */
  newPath: string | null;
  hunks: PatchHunk[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Parses a unified diff (plain or git-style, several files). Lenient where models commonly slip and
 * nothing is ambiguous: wrong hunk counts, a context line whose leading space was lost to an editor,
 * a bare "@@", CRLF in the patch text. Anything else is an INVALID_ARGUMENTS naming the patch line.
 */
export function parseUnifiedDiff(patch: string): FilePatch[] {
  const lines = patch.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  const files: FilePatch[] = [];
  let git: { oldPath: string; newPath: string; created: boolean; deleted: boolean } | null = null;
  let i = 0;
  const flushGitOnly = (): void => {
    // A git header with no hunks: an empty file created or deleted.
    if (git && (git.created || git.deleted)) {
      files.push({
        oldPath: git.created ? null : git.oldPath,
        newPath: git.deleted ? null : git.newPath,
        hunks: [],
      });
    }
    git = null;
  };
  while (i < lines.length) {
    const line = lines[i];
    if (line.startsWith('diff --git ')) {
      flushGitOnly();
      const paths = /^diff --git a\/(.+) b\/(.+)$/.exec(line);
      git = paths ? { oldPath: paths[1], newPath: paths[2], created: false, deleted: false } : null;
      i++;
    } else if (git && line.startsWith('new file mode')) {
      git.created = true;
      i++;
    } else if (git && line.startsWith('deleted file mode')) {
      git.deleted = true;
      i++;
    } else if (line.startsWith('--- ') && lines[i + 1]?.startsWith('+++ ')) {
      git = null;
      const [oldPath, newPath] = stripPrefixes(headerPath(line), headerPath(lines[i + 1]));
      const file: FilePatch = { oldPath, newPath, hunks: [] };
      i = parseHunks(lines, i + 2, file);
      if (file.hunks.length === 0) {
        throw invalid(i, `the changes to ${newPath ?? oldPath ?? '?'} have no @@ hunk`);
      }
      files.push(file);
    } else if (line.startsWith('@@')) {
      throw invalid(i + 1, 'a hunk must follow "--- old-path" and "+++ new-path" header lines');
    } else {
      i++; // Prose, "index …" and other git extended headers carry nothing we need.
    }
  }
  flushGitOnly();
  if (files.length === 0) {
    throw new ToolError(
      'INVALID_ARGUMENTS',
      'patch: no file changes found; expected "--- a/path", "+++ b/path" and "@@ … @@" hunks.',
    );
  }
  return files;
}

function parseHunks(lines: readonly string[], from: number, file: FilePatch): number {
  let i = from;
  while (i < lines.length && lines[i].startsWith('@@')) {
    const header = lines[i];
    const numbers = HUNK_HEADER.exec(header);
    if (!numbers && header.trim() !== '@@' && !/^@@\s*@@/.test(header)) {
      throw invalid(
        i + 1,
        `malformed hunk header ${JSON.stringify(header)}; expected "@@ -start,count +start,count @@"`,
      );
    }
    const hunk: PatchHunk = {
      oldStart: numbers ? Number(numbers[1]) : null,
      oldLines: numbers ? Number(numbers[2] ?? 1) : null,
      newLines: numbers ? Number(numbers[4] ?? 1) : null,
      header,
      lines: [],
    };
    i = parseHunkBody(lines, i + 1, hunk);
    file.hunks.push(hunk);
  }
  return i;
}

function parseHunkBody(lines: readonly string[], from: number, hunk: PatchHunk): number {
  let i = from;
  let oldSeen = 0;
  let newSeen = 0;
  const countsMet = (): boolean =>
    hunk.oldLines !== null && hunk.newLines !== null && oldSeen >= hunk.oldLines && newSeen >= hunk.newLines;
  while (i < lines.length) {
    const line = lines[i];
    if (line.startsWith('\\')) {
      const last = hunk.lines[hunk.lines.length - 1];
      if (last) last.noNewline = true;
      i++;
      continue;
    }
    if (line.startsWith('@@') || line.startsWith('diff --git ')) break;
    if (isFileHeader(lines, i)) break;
    if (line === '') {
      // A blank context line whose space an editor stripped — unless no hunk line follows: then it is
      // the blank line at the end of the patch (dropping a trailing blank context line only loosens the match).
      if (!moreBodyFollows(lines, i + 1)) break;
      hunk.lines.push({ op: ' ', text: '', noNewline: false });
      oldSeen++;
      newSeen++;
      i++;
      continue;
    }
    const op = line[0];
    if (op !== ' ' && op !== '-' && op !== '+') {
      if (countsMet()) break;
      throw invalid(
        i + 1,
        `${JSON.stringify(line.slice(0, 80))} is not a hunk line; each must start with " " (context), "-" (removed) or "+" (added)`,
      );
    }
    hunk.lines.push({ op, text: line.slice(1), noNewline: false });
    if (op !== '+') oldSeen++;
    if (op !== '-') newSeen++;
    i++;
  }
  if (hunk.lines.length === 0) throw invalid(i, `the hunk ${JSON.stringify(hunk.header)} is empty`);
  return i;
}

function moreBodyFollows(lines: readonly string[], from: number): boolean {
  for (let i = from; i < lines.length; i++) {
    const line = lines[i];
    if (line === '') continue;
    if (isFileHeader(lines, i)) return false;
    return line[0] === ' ' || line[0] === '-' || line[0] === '+' || line.startsWith('\\');
  }
  return false;
}

/**
 * "--- x" then "+++ y" then "@@": the next file. Checked before reading a line as a removal, so a
 * hunk whose counts are wrong cannot swallow the following file's headers.
 */
function isFileHeader(lines: readonly string[], i: number): boolean {
  return (
    lines[i].startsWith('--- ') &&
    (lines[i + 1]?.startsWith('+++ ') ?? false) &&
    (lines[i + 2]?.startsWith('@@') ?? false)
  );
}

/** The path in a "--- " or "+++ " line, without the timestamp some diff tools append after a tab. */
function headerPath(line: string): string | null {
  let path = line.slice(4).split('\t')[0]?.trim() ?? '';
  if (path.startsWith('"') && path.endsWith('"') && path.length >= 2) path = path.slice(1, -1);
  return path === '/dev/null' ? null : path;
}

/** Git's a/ and b/ prefixes, removed only when both sides use them (a folder may really be named "a"). */
function stripPrefixes(oldPath: string | null, newPath: string | null): [string | null, string | null] {
  const oldOk = oldPath === null || oldPath.startsWith('a/');
  const newOk = newPath === null || newPath.startsWith('b/');
  if (!oldOk || !newOk || (oldPath === null && newPath === null)) return [oldPath, newPath];
  return [oldPath?.slice(2) ?? null, newPath?.slice(2) ?? null];
}

function invalid(lineNumber: number, message: string): ToolError {
  return new ToolError('INVALID_ARGUMENTS', `patch line ${lineNumber}: ${message}.`);
}
