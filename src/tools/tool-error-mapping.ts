import { errnoCode, errorMessage } from './fs/errno';
import { ToolError, type ToolErrorCode } from './tool';

const ERRNO_CODES: Readonly<Record<string, ToolErrorCode>> = {
  ENOENT: 'NOT_FOUND',
  ENOTDIR: 'NOT_FOUND',
  EACCES: 'PERMISSION_DENIED',
  EPERM: 'PERMISSION_DENIED',
  /** O_NOFOLLOW met a symbolic link put where a file or folder was (held-dir.ts). */
  ELOOP: 'PERMISSION_DENIED',
  EROFS: 'PERMISSION_DENIED',
  EISDIR: 'INVALID_ARGUMENTS',
  EEXIST: 'CONFLICT',
  ENOTEMPTY: 'CONFLICT',
  ENOSPC: 'SIZE_LIMIT',
  EFBIG: 'SIZE_LIMIT',
};

/**
 * Turns whatever a tool threw into a ToolError. File-system errors keep their meaning (a model can act
 * on "not found" or "permission denied") and lose the server's absolute paths.
 */
export function toToolError(err: unknown, toolName: string, workspaceRoot: string): ToolError {
  if (err instanceof ToolError) return err;
  const message = errorMessage(err);
  const code = errnoCode(err);
  const mapped = code === undefined ? undefined : ERRNO_CODES[code];
  return new ToolError(
    mapped ?? 'EXECUTION_ERROR',
    `${toolName} failed: ${hideRoot(message, workspaceRoot)}`,
  );
}

function hideRoot(message: string, workspaceRoot: string): string {
  // A held folder's name (fs/held-dir.ts) says nothing to the model; the name after it does.
  const held = message.replace(/\/proc\/self\/fd\/\d+\/?/g, '');
  if (workspaceRoot === '' || workspaceRoot === '/') return held;
  return held.split(`${workspaceRoot}/`).join('').split(workspaceRoot).join('.');
}
