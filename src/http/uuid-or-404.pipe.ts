import { Injectable, type PipeTransform } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id that is not even a uuid names nothing: 404, like any other id that does not exist. */
@Injectable()
export class UuidOr404Pipe implements PipeTransform<string, string> {
  constructor(private readonly what: 'session' | 'run' | 'webhook') {}

  transform(value: string): string {
    if (UUID.test(value)) return value.toLowerCase();
    throw notFound(this.what, value);
  }
}

function notFound(what: 'session' | 'run' | 'webhook', value: string): DomainError {
  switch (what) {
    case 'session':
      return new DomainError(ErrorCode.SessionNotFound, `Session ${value} not found`);
    case 'run':
      return new DomainError(ErrorCode.RunNotFound, `Run ${value} not found`);
    case 'webhook':
      return new DomainError(ErrorCode.WebhookNotFound, `Webhook ${value} not found`);
  }
}

export const SessionIdPipe = new UuidOr404Pipe('session');
export const RunIdPipe = new UuidOr404Pipe('run');
export const WebhookIdPipe = new UuidOr404Pipe('webhook');
