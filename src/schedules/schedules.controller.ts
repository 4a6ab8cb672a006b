import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { EndUser } from '../auth/end-user';
import { Owner } from '../auth/owner.decorator';
import { ApiErrors } from '../http/api-errors.decorator';
import { ListSessionsQuery } from '../sessions/dto/list-sessions.query';
import { CreateScheduleDto } from './dto/create-schedule.dto';
import { ScheduleResponse, SchedulePageResponse, ScheduleRunListResponse } from './dto/schedule.response';
import { UpdateScheduleDto } from './dto/update-schedule.dto';
import { ScheduleIdPipe } from './schedule-id.pipe';
import { scheduleRunView, scheduleView } from './schedule.presenter';
import { Schedules } from './schedules.service';

@ApiTags('schedules')
@Controller('v1/schedules')
export class SchedulesController {
  constructor(private readonly schedules: Schedules) {}

  @Post()
  @ApiOperation({ summary: 'Send a prompt on a cron (five fields, an IANA time zone)' })
  @ApiCreatedResponse({ type: ScheduleResponse })
  @ApiErrors(400, 404)
  async create(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Body() body: CreateScheduleDto,
  ): Promise<ScheduleResponse> {
    return scheduleView(await this.schedules.create(owner, endUser, body));
  }

  @Get()
  @ApiOperation({ summary: "The caller's schedules, newest first" })
  @ApiOkResponse({ type: SchedulePageResponse })
  @ApiErrors(400)
  async list(@Owner() owner: string, @EndUser() endUser: string | null, @Query() query: ListSessionsQuery) {
    const page = await this.schedules.list(owner, endUser, query.limit ?? 20, query.cursor);
    return { data: page.data.map(scheduleView), nextCursor: page.nextCursor };
  }

  @Get(':id')
  @ApiOperation({ summary: 'A schedule' })
  @ApiOkResponse({ type: ScheduleResponse })
  @ApiErrors(404)
  async get(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Param('id', ScheduleIdPipe) id: string,
  ): Promise<ScheduleResponse> {
    return scheduleView(await this.schedules.get(owner, endUser, id));
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Enable, disable or change a schedule (enabled, cron, timezone, prompt)' })
  @ApiOkResponse({ type: ScheduleResponse })
  @ApiErrors(400, 404)
  async update(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Param('id', ScheduleIdPipe) id: string,
    @Body() body: UpdateScheduleDto,
  ): Promise<ScheduleResponse> {
    return scheduleView(await this.schedules.update(owner, endUser, id, body));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a schedule (its runs stay)' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(404)
  async delete(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Param('id', ScheduleIdPipe) id: string,
  ): Promise<void> {
    await this.schedules.delete(owner, endUser, id);
  }

  @Get(':id/runs')
  @ApiOperation({ summary: "A schedule's due times and their runs, skipped ones included, newest first" })
  @ApiOkResponse({ type: ScheduleRunListResponse })
  @ApiErrors(404)
  async runs(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Param('id', ScheduleIdPipe) id: string,
  ): Promise<ScheduleRunListResponse> {
    return { data: (await this.schedules.runs(owner, endUser, id)).map(scheduleRunView) };
  }
}
