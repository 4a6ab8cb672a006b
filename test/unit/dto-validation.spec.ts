import { BadRequestException, type ArgumentMetadata } from '@nestjs/common';
import { ApprovalDto } from '../../src/runs/dto/approval.dto';
import { CreateChatDto } from '../../src/runs/dto/create-chat.dto';
import { ListSessionsQuery } from '../../src/sessions/dto/list-sessions.query';
import { createValidationPipe } from '../../src/http/validation-pipe';

const pipe = createValidationPipe();

async function messages(
  metatype: ArgumentMetadata['metatype'],
  value: unknown,
  type: 'body' | 'query' = 'body',
) {
  try {
    await pipe.transform(value, { type, metatype });
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(BadRequestException);
    return (err as BadRequestException).getResponse() as { message: string[] };
  }
}

describe('request DTOs', () => {
  it('accepts a minimal chat and keeps it as given', async () => {
    const dto = (await pipe.transform(
      { prompt: 'hi' },
      { type: 'body', metatype: CreateChatDto },
    )) as CreateChatDto;
    expect(dto).toBeInstanceOf(CreateChatDto);
    expect(dto.prompt).toBe('hi');
  });

  it.each([
    [{ prompt: 42 }, 'prompt must be a string'],
    [{ prompt: '' }, 'prompt should not be empty'],
    [{ prompt: 'x', maxIterations: '3' }, 'maxIterations must be an integer number'],
    [{ prompt: 'x', mode: 'yolo' }, 'mode must be one of the following values: safe, write, exec'],
    [{ prompt: 'x', sessionId: 'abc' }, 'sessionId must be a UUID'],
    [{ prompt: 'x', tools: 'read_file' }, 'tools must be an array'],
    [{ prompt: 'x', surprise: true }, 'property surprise should not exist'],
  ])('refuses %j, naming the field', async (body, expected) => {
    const res = await messages(CreateChatDto, body);
    expect(JSON.stringify(res)).toContain(expected);
  });

  it('names the path of a nested field in a client tool', async () => {
    const res = await messages(CreateChatDto, {
      prompt: 'x',
      clientTools: [{ type: 'function', function: { name: 'bad name!' } }],
    });
    expect(JSON.stringify(res)).toContain('clientTools.0.function.name');
  });

  it('coerces nothing in a body: "true" is not a boolean', async () => {
    expect(JSON.stringify(await messages(ApprovalDto, { approve: 'true' }))).toContain(
      'approve must be a boolean value',
    );
  });

  it('reads a query limit as a number within 1–100', async () => {
    const q = (await pipe.transform(
      { limit: '5' },
      { type: 'query', metatype: ListSessionsQuery },
    )) as ListSessionsQuery;
    expect(q.limit).toBe(5);
    expect(JSON.stringify(await messages(ListSessionsQuery, { limit: '500' }, 'query'))).toContain(
      'limit must not be greater than 100',
    );
  });
});
