import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { AgentTool } from '../agent-tool.decorator';
import { ToolError, type Tool, type ToolResult } from '../tool';

export const DELEGATE_TOOL = 'delegate';

export interface DelegateArgs {
  agent: string;
  task: string;
}

/**
 * `delegate { agent, task }`: offered when AGENTS_CONFIG names agents. A call is never executed
 * here: the run waits for it like a call waiting for a person, a child run of the agent answers it
 * when it ends (docs/decisions/022-delegation-is-a-wait.md). `kind` `read`: delegating changes nothing itself, so
 * it runs without approval in every mode; the child's own calls follow their policies.
 */
@Injectable()
@AgentTool()
export class DelegateTool implements Tool<DelegateArgs> {
  readonly name = DELEGATE_TOOL;
  readonly kind = 'read';
  readonly description: string;
  readonly parameters: Record<string, unknown>;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const names = config.agents.map((a) => a.name);
    this.description = [
      'Hand a task to a named agent, which works on it in its own conversation with its own tools and answers with its final text. Several delegations in one step run at once. Agents:',
      ...config.agents.map((a) => `- ${a.name}: ${a.description}`),
    ].join('\n');
    this.parameters = {
      type: 'object',
      properties: {
        agent: {
          type: 'string',
          enum: names.length > 0 ? names : [''],
          description: 'The agent to hand the task to.',
        },
        task: {
          type: 'string',
          minLength: 1,
          description: 'Everything the agent needs to know: it sees nothing of this conversation.',
        },
      },
      required: ['agent', 'task'],
      additionalProperties: false,
    };
  }

  isEnabled(config: AppConfig): boolean {
    return config.agents.length > 0;
  }

  execute(): Promise<ToolResult> {
    // Unreachable through the loop (a delegate call waits for its child run); a safeguard.
    return Promise.reject(new ToolError('EXECUTION_ERROR', 'delegate is answered by its child run.'));
  }
}
