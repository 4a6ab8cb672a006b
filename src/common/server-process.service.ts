import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';

/**
 * This server process, named once at start-up: the owner of its run leases (DrivenRuns) and of its
 * background commands' rows, so another process can tell what a lost one left behind.
 */
@Injectable()
export class ServerProcess {
  readonly id = randomUUID();
}
