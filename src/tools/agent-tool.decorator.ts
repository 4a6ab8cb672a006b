import { DiscoveryService } from '@nestjs/core';

/**
 * Marks a provider as a tool the model can be offered. The ToolRegistry finds every provider that
 * carries it at start-up, so a new tool is one class plus one line in a module's providers.
 */
export const AgentTool = DiscoveryService.createDecorator<void>();
