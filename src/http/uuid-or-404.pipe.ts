import { Injectable, type PipeTransform } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Named = 'session' | 'run' | 'webhook' | 'file';

/** An id that is not even a uuid names nothing: 404, like any other id that does not exist. */
@Injectable()
export class UuidOr404Pipe implements PipeTransform<string, string> {
  constructor(private readonly what: Named) {}

  transform(value: string): string {
    if (UUID.test(value)) return value.toLowerCase();
    throw notFound(this.what, value);
  }
}

function notFound(what: Named, id: string): DomainError {
  switch (what) {
    case 'session':
      return new DomainError(ErrorCode.SessionNotFound, `Session ${id} not found`);
    case 'run':
      return new DomainError(ErrorCode.RunNotFound, `Run ${id} not found`);
    case 'webhook':
      return new DomainError(ErrorCode.WebhookNotFound, `Webhook ${id} not found`);
    case 'file':
      return new DomainError(ErrorCode.FileNotFound, `File ${id} not found`);
  }
}

export const FileIdPipe = new UuidOr404Pipe('file');
export const SessionIdPipe = new UuidOr404Pipe('session');
export const RunIdPipe = new UuidOr404Pipe('run');
export const WebhookIdPipe = new UuidOr404Pipe('webhook');
