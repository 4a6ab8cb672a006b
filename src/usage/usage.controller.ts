import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { EndUser } from '../auth/end-user';
import { Owner } from '../auth/owner.decorator';
import { ApiErrors } from '../http/api-errors.decorator';
import { UsageReports } from './usage-reports.service';
import { UsageQuery } from './dto/usage.query';
import { UsageListResponse } from './dto/usage.response';
import { usageView } from './usage.presenter';

@ApiTags('usage')
@Controller('v1/usage')
export class UsageController {
  constructor(private readonly reports: UsageReports) {}

  @Get()
  @ApiOperation({
    summary: "Tokens and cost over a time range, grouped; the caller's key only unless it is an admin key",
  })
  @ApiOkResponse({ type: UsageListResponse })
  @ApiErrors(400)
  async usage(
    @Owner() owner: string,
    @EndUser() endUser: string | null,
    @Query() query: UsageQuery,
  ): Promise<UsageListResponse> {
    const { grouping, rows, limits } = await this.reports.report(owner, endUser, query);
    return { data: rows.map((r) => usageView(grouping, r)), limits };
  }
}
