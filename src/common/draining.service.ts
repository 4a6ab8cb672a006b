import { Global, Injectable, Module } from '@nestjs/common';

/**
 * Whether the process is shutting down. Set the moment SIGTERM or SIGINT arrives (main.ts), before
 * anything closes: from then on no run starts (503), readiness answers 503 so a load balancer sends
 * new work elsewhere, and running runs get SHUTDOWN_GRACE_MS to finish.
 */
@Injectable()
export class Draining {
  private since: number | null = null;

  get active(): boolean {
    return this.since !== null;
  }

  start(): void {
    this.since ??= Date.now();
  }
}

/** Provides the one Draining state to every module. */
@Global()
@Module({ providers: [Draining], exports: [Draining] })
export class DrainingModule {}
