import { ConfigError, loadConfig } from '../../src/config/app-config';

describe('WEBHOOK_RETENTION_HOURS', () => {
  it('keeps given-up webhook events and attempts 24 hours by default, or the hours given', () => {
    expect(loadConfig({}, '/srv').webhookRetentionHours).toBe(24);
    expect(loadConfig({ WEBHOOK_RETENTION_HOURS: '168' }, '/srv').webhookRetentionHours).toBe(168);
  });

  it.each(['0', '-1', '1.5', 'a day', '87601'])('refuses %j at start-up, naming the variable', (value) => {
    expect(() => loadConfig({ WEBHOOK_RETENTION_HOURS: value }, '/srv')).toThrow(ConfigError);
    expect(() => loadConfig({ WEBHOOK_RETENTION_HOURS: value }, '/srv')).toThrow(/WEBHOOK_RETENTION_HOURS/);
  });
});
