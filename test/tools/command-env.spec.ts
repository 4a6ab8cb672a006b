import { buildCommandEnv } from '../../src/config/command-env';

describe('buildCommandEnv', () => {
  const serverEnv = {
    PATH: '/usr/bin',
    HOME: '/home/app',
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    OPENAI_API_KEY: 'sk-secret',
    DATABASE_URL: 'postgres://x',
    API_KEYS: 'a:b',
    NODE_OPTIONS: '--require evil',
    LD_PRELOAD: 'evil.so',
    DYLD_INSERT_LIBRARIES: 'evil.dylib',
    GIT_SSH_COMMAND: 'evil',
    BASH_ENV: 'evil.sh',
    ENV: 'evil.sh',
    PYTHONSTARTUP: 'evil.py',
    PERL5OPT: '-Mevil',
    CI: 'true',
    UNSET_NAME: undefined,
  };

  it('passes the base allow-list only', () => {
    expect(buildCommandEnv(serverEnv, [])).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/app',
      LANG: 'C.UTF-8',
      TZ: 'UTC',
    });
  });

  it('adds the names the operator lists', () => {
    expect(buildCommandEnv(serverEnv, ['CI', 'UNSET_NAME'])).toMatchObject({ CI: 'true' });
    expect(buildCommandEnv(serverEnv, ['UNSET_NAME'])).not.toHaveProperty('UNSET_NAME');
  });

  it('drops the server’s secrets and start-up hijackers even when the operator lists them', () => {
    const names = [
      'OPENAI_API_KEY',
      'DATABASE_URL',
      'API_KEYS',
      'NODE_OPTIONS',
      'LD_PRELOAD',
      'DYLD_INSERT_LIBRARIES',
      'GIT_SSH_COMMAND',
      'BASH_ENV',
      'ENV',
      'PYTHONSTARTUP',
      'PERL5OPT',
    ];
    const env = buildCommandEnv(serverEnv, names);
    for (const name of names) expect(env).not.toHaveProperty(name);
  });
});
