import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import type { AppConfig } from '../config/app-config';
import { recoverInterruptedWrites } from './fs/write-journal';

/**
 * At start, in the background (readiness does not wait): finishes multi-file changes a killed
 * process left journaled, and removes the staged files of writes that never completed.
 */
@Injectable()
export class WorkspaceRecovery implements OnApplicationBootstrap {
  private readonly logger = new Logger(WorkspaceRecovery.name);

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  onApplicationBootstrap(): void {
    recoverInterruptedWrites(this.config.workspaceRoot).then(
      ({ rolledForward, removedTemps }) => {
        if (rolledForward + removedTemps > 0) {
          this.logger.log(
            `workspace recovered: ${rolledForward} interrupted change(s) finished, ${removedTemps} staged file(s) removed`,
          );
        }
      },
      (err: Error) => this.logger.warn(`could not recover interrupted writes: ${err.message}`),
    );
  }
}
