import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DomainError, ErrorCode } from '../common/domain-error';
import { sessionNotFound } from '../sessions/sessions.service';
import { ForkStore, type StoredFork } from '../store/fork-store.service';

/**
 * Forks of sessions ("Fork and replay"): a new session of the same owner, with the same options and
 * title, whose conversation is its source's up to a message. It is a copy (decision 021), so either
 * session goes on, is compacted or deleted without the other noticing.
 */
@Injectable()
export class Forks {
  constructor(private readonly store: ForkStore) {}

  /**
   * Forks the owner's session `sessionId` after `atMessageId` (default: its last stored message,
   * leaving out a step whose calls are not all answered). A message that is not the session's, or
   * one inside a tool-call group, is a 400 naming it; a session that is not the owner's a 404.
   */
  async fork(owner: string, sessionId: string, atMessageId: string | null): Promise<StoredFork> {
    const point = await this.store.point(owner, sessionId, atMessageId);
    if (point === null) throw sessionNotFound(sessionId);
    if (!point.ok) {
      if (point.why === 'not-a-message') {
        throw invalid(`atMessageId ${atMessageId} is not a message of session ${sessionId}`);
      }
      if (point.why === 'inside-tool-calls') {
        throw invalid(
          `atMessageId ${atMessageId} is inside a tool-call group: fork at the assistant message's last tool message, or before the assistant message`,
        );
      }
      throw invalid(`Session ${sessionId} has no message to fork at`);
    }
    const fork = await this.store.fork(owner, sessionId, randomUUID(), point.seq);
    if (fork === null) throw sessionNotFound(sessionId);
    return fork;
  }
}

function invalid(message: string): DomainError {
  return new DomainError(ErrorCode.InvalidRequest, message);
}
