import { toToolError } from '../../src/tools/tool-error-mapping';

const errno = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('toToolError', () => {
  it('drops the held folders (/proc/self/fd/N) from a file-system error, keeping the names', () => {
    const error = toToolError(
      errno(
        'ENOENT',
        "ENOENT: no such file or directory, rename '/proc/self/fd/23/.x.tmp' -> '/proc/self/fd/23/x'",
      ),
      'write_file',
      '/srv/ws',
    );
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toBe(
      "write_file failed: ENOENT: no such file or directory, rename '.x.tmp' -> 'x'",
    );
  });

  it('answers a symbolic link met where no link is followed as PERMISSION_DENIED', () => {
    const error = toToolError(
      errno('ELOOP', 'ELOOP: too many symbolic links encountered'),
      'read_file',
      '/srv/ws',
    );
    expect(error.code).toBe('PERMISSION_DENIED');
  });
});
