import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refuseUnknownAgentTools } from '../../src/agents/agents.service';
import { ConfigError, loadConfig } from '../../src/config/app-config';
import { refuseUnservedModels } from '../../src/llm/served-models';

/** loadConfig with AGENTS_CONFIG pointing at a file holding `agents` (or `document` as a whole). */
function withAgents(agents: unknown, env: Record<string, string> = {}, document?: string) {
  const dir = mkdtempSync(join(tmpdir(), 'loopwright-agents-config-'));
  const file = join(dir, 'agents.json');
  writeFileSync(file, document ?? JSON.stringify({ agents }));
  return () => loadConfig({ AGENTS_CONFIG: file, ...env }, dir);
}

function refusal(load: () => unknown): string {
  try {
    load();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('the configuration was accepted');
}

describe('AGENTS_CONFIG', () => {
  it('reads named agents, leaving the fields not given to the defaults of SessionOptions', () => {
    const config = withAgents({
      reviewer: {
        description: 'Reviews a diff.',
        systemPrompt: 'You review code.',
        model: 'openai/gpt-4.1',
        mode: 'safe',
        tools: ['read_file'],
        maxIterations: 3,
      },
      tester: { description: 'Runs the tests.' },
    })();
    expect(config.agents).toEqual([
      {
        name: 'reviewer',
        description: 'Reviews a diff.',
        systemPrompt: 'You review code.',
        model: 'openai/gpt-4.1',
        mode: 'safe',
        tools: ['read_file'],
        maxIterations: 3,
      },
      {
        name: 'tester',
        description: 'Runs the tests.',
        systemPrompt: null,
        model: null,
        mode: null,
        tools: null,
        maxIterations: null,
      },
    ]);
    expect(config.agentMaxDepth).toBe(2);
    expect(config.agentMaxParallel).toBe(4);
    expect(loadConfig({}).agents).toEqual([]);
  });

  it.each([
    [{ 'bad name': { description: 'x' } }, 'agent "bad name"', '[A-Za-z0-9_-]{1,64}'],
    [{ reviewer: {} }, 'agent "reviewer"', 'description'],
    [{ reviewer: { description: 'x', mode: 'root' } }, 'agent "reviewer"', 'mode'],
    [{ reviewer: { description: 'x', tools: 'read_file' } }, 'agent "reviewer"', 'tools'],
    [{ reviewer: { description: 'x', maxIterations: 11 } }, 'agent "reviewer"', 'maxIterations'],
    [{ reviewer: { description: 'x', modle: 'gpt' } }, 'agent "reviewer"', 'modle'],
  ])('stops start-up naming the agent and the field: %j', (agents, agent, field) => {
    const message = refusal(withAgents(agents, { MAX_ITERATIONS: '10' }));
    expect(message).toContain('AGENTS_CONFIG');
    expect(message).toContain(agent);
    expect(message).toContain(field);
  });

  it('stops start-up on a file that is not JSON', () => {
    expect(refusal(withAgents(null, {}, '{ agents: '))).toContain('not JSON');
  });

  it('stops start-up on a model of a provider that is not configured, naming the agent', () => {
    const config = withAgents({ reviewer: { description: 'x', model: 'anthropic/claude-sonnet-4-6' } })();
    const message = refusal(() => refuseUnservedModels(config));
    expect(message).toContain('agent "reviewer"');
    expect(message).toContain('ANTHROPIC_API_KEY');
  });

  it('stops start-up on a tool no tool of the server can be, naming the agent and the field', () => {
    const config = withAgents({
      reviewer: { description: 'x', tools: ['read_file'] },
      tester: { description: 'y', tools: ['read_file', 'run_tests'] },
    })();
    const message = refusal(() => refuseUnknownAgentTools(config.agents, (name) => name === 'read_file'));
    expect(message).toContain('agent "tester"');
    expect(message).toContain('tools');
    expect(message).toContain('run_tests');
  });
});
