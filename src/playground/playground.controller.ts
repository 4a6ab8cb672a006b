import { Controller, Get, NotFoundException, Param, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { PLAYGROUND_CSP } from './playground-csp';
import { loadPlaygroundFiles, type PlaygroundFile } from './playground-files';

/** `GET /` and `GET /assets/:name`: the playground page, public like /docs (the key lives in the browser). */
@ApiExcludeController()
@Controller()
export class PlaygroundController {
  private readonly files = loadPlaygroundFiles();

  @Get()
  page(@Res() reply: FastifyReply): void {
    if (this.files === null) {
      throw new ServiceUnavailableException('The playground is not built: run `npm run build`');
    }
    this.send(reply, this.files.index, 'no-cache');
  }

  @Get('assets/:name')
  asset(@Param('name') name: string, @Res() reply: FastifyReply): void {
    const file = this.files?.assets.get(name);
    if (file === undefined) throw new NotFoundException();
    this.send(reply, file, 'no-cache');
  }

  private send(reply: FastifyReply, file: PlaygroundFile, cacheControl: string): void {
    // Set after helmet's hook, so this policy replaces the API-wide default on these routes only.
    void reply
      .header('content-security-policy', PLAYGROUND_CSP)
      .header('cache-control', cacheControl)
      .type(file.type)
      .send(file.content);
  }
}
