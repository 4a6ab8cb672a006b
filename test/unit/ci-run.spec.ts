import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const CI_RUN = resolve(__dirname, '../../.ci/run');

/**
 * .ci/run on a host where none of the Debian packages it needs is there and apt-get cannot install
 * them: a PATH of stand-ins, where everything after the set-up (node, npm) only records that it ran.
 */
describe('.ci/run', () => {
  let bin: string;
  beforeEach(() => {
    bin = mkdtempSync(join(tmpdir(), 'ci-run-'));
    symlinkSync('/usr/bin/dirname', join(bin, 'dirname'));
    const stub = (name: string, body: string) => {
      writeFileSync(join(bin, name), `#!/bin/bash\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    stub('apt-get', 'echo "E: Unable to locate package $*" >&2; exit 100');
    for (const later of ['sh', 'npm']) stub(later, `echo "${later} $*" >> "${join(bin, 'went-on')}"`);
  });
  afterEach(() => rmSync(bin, { recursive: true, force: true }));

  it('fails, naming what it could not install, before anything else runs', () => {
    const run = spawnSync('/bin/bash', [CI_RUN], { env: { PATH: bin }, encoding: 'utf8' });
    expect(run.stderr).toContain('could not install bubblewrap chromium docker-compose');
    expect(run.status).toBe(1);
    expect(existsSync(join(bin, 'went-on'))).toBe(false);
  });
});
