import { Injectable, type OnModuleInit } from '@nestjs/common';
import { BackgroundCommandStore, type BackgroundCommandRow } from '../store/background-command-store.service';
import { BackgroundCommands } from '../tools/exec/background-commands.service';
import type { CommandRecords } from '../tools/exec/command-records';
import { Sessions } from '../sessions/sessions.service';

/**
 * A session's background commands: their durable list (GET /v1/sessions/:id/commands), and the
 * store wired under BackgroundCommands at start-up — which then marks what lost processes left
 * running stopped.
 */
@Injectable()
export class SessionCommands implements OnModuleInit {
  constructor(
    private readonly store: BackgroundCommandStore,
    private readonly background: BackgroundCommands,
    private readonly sessions: Sessions,
  ) {}

  async onModuleInit(): Promise<void> {
    const store = this.store;
    const records: CommandRecords = {
      open: (row) => store.open(row),
      end: (id, status, exitCode, reason) => store.end(id, status, exitCode, reason),
      renew: async (processId, ids, leaseMs) =>
        (await store.renew(processId, ids, leaseMs)).map((r) =>
          r.renewed
            ? { commandId: r.commandId, renewed: true }
            : { commandId: r.commandId, renewed: false, reason: r.stopReason ?? 'process' },
        ),
      find: (sessionId, id) => store.find(sessionId, id),
      stop: (sessionId, id, reason) => store.stop(sessionId, id, reason),
      stopLost: (processId) => store.stopLost(processId),
    };
    await this.background.keepRecordsIn(records);
  }

  /** The owner's session's commands, oldest first; a session the caller cannot see is a 404. */
  async list(owner: string, sessionId: string): Promise<BackgroundCommandRow[]> {
    await this.sessions.find(owner, sessionId);
    return this.store.list(owner, sessionId);
  }
}
