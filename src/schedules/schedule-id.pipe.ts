import { Injectable, type PipeTransform } from '@nestjs/common';
import { scheduleNotFound } from './schedules.service';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A schedule id that is not even a uuid names nothing: 404, like any id that does not exist. */
@Injectable()
export class ScheduleIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (UUID.test(value)) return value.toLowerCase();
    throw scheduleNotFound(value.slice(0, 64));
  }
}
