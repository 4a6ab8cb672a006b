import { Injectable, type PipeTransform } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id that is not even a uuid names nothing: 404, like any other id that does not exist. */
@Injectable()
export class UuidOr404Pipe implements PipeTransform<string, string> {
  constructor(private readonly what: 'session' | 'run') {}

  transform(value: string): string {
    if (UUID.test(value)) return value.toLowerCase();
    throw this.what === 'session'
      ? new DomainError(ErrorCode.SessionNotFound, `Session ${value} not found`)
      : new DomainError(ErrorCode.RunNotFound, `Run ${value} not found`);
  }
}

export const SessionIdPipe = new UuidOr404Pipe('session');
export const RunIdPipe = new UuidOr404Pipe('run');
