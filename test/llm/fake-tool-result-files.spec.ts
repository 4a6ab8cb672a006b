import Anthropic, { BadRequestError as AnthropicBadRequest } from '@anthropic-ai/sdk';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages/messages';
import OpenAI, { BadRequestError } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { png } from '../support/attachments';
import { anthropicText, FakeAnthropic } from '../support/fake-anthropic';
import { FakeResponses, responsesText } from '../support/fake-responses';
import { FakeUpstream, text } from '../support/fake-upstream';

/*
 * What the real APIs refuse of a tool result that carries an image ("Attachments": read_file),
 * refused by the fakes too, through the official SDKs — the rules the providers' mappers rely on.
 */

const PNG = png(3, 2).toString('base64');
const NOT_PNG = Buffer.from('not a png at all').toString('base64');

async function failure(request: Promise<unknown>): Promise<unknown> {
  return request.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe('the fakes refuse what the real APIs refuse of files in tool results', () => {
  let chat: FakeUpstream;
  let anthropic: FakeAnthropic;
  let responses: FakeResponses;

  beforeAll(async () => {
    [chat, anthropic, responses] = await Promise.all([
      FakeUpstream.start(),
      FakeAnthropic.start(),
      FakeResponses.start(),
    ]);
  });
  afterAll(async () => {
    await Promise.all([chat.close(), anthropic.close(), responses.close()]);
  });

  it('Chat Completions: no image in a tool message, no user message between tool calls and their results', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: chat.baseUrl, maxRetries: 0 });
    const asked: ChatCompletionMessageParam = {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{}' } },
        { id: 'call_b', type: 'function', function: { name: 'read_file', arguments: '{}' } },
      ],
    };
    const image: ChatCompletionMessageParam = {
      role: 'user',
      content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }],
    };
    const send = (messages: ChatCompletionMessageParam[]) =>
      failure(client.chat.completions.create({ model: 'gpt-test', messages }));
    const start: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Look.' }, asked];

    const inTool = await send([
      ...start,
      { role: 'tool', tool_call_id: 'call_a', content: [{ type: 'text', text: 'a' }] },
      // The SDK's type takes only text parts in a tool message: the API refuses anything else.
      {
        role: 'tool',
        tool_call_id: 'call_b',
        content: image.content,
      } as unknown as ChatCompletionMessageParam,
    ]);
    expect(inTool).toBeInstanceOf(BadRequestError);
    expect((inTool as BadRequestError).message).toMatch(/Supported values are: 'text'/);

    const between = await send([
      ...start,
      { role: 'tool', tool_call_id: 'call_a', content: 'a' },
      image,
      { role: 'tool', tool_call_id: 'call_b', content: 'b' },
    ]);
    expect(between).toBeInstanceOf(BadRequestError);
    expect((between as BadRequestError).message).toMatch(
      /must be followed by tool messages responding to each 'tool_call_id'.*call_b/,
    );

    chat.enqueue(text('Seen.'));
    const after = await send([
      ...start,
      { role: 'tool', tool_call_id: 'call_a', content: 'a' },
      { role: 'tool', tool_call_id: 'call_b', content: 'b' },
      image,
    ]);
    expect(after).toBeUndefined();
  });

  it('Anthropic: image blocks inside a tool_result are checked as in a user turn', async () => {
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: anthropic.baseUrl, maxRetries: 0 });
    const messages = (data: string): MessageParam[] => [
      { role: 'user', content: 'Look.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [
              { type: 'text', text: 'shot.png' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data } },
            ],
          },
        ],
      },
    ];
    const send = (data: string) =>
      failure(client.messages.create({ model: 'claude-x', max_tokens: 1024, messages: messages(data) }));

    const broken = await send(NOT_PNG);
    expect(broken).toBeInstanceOf(AnthropicBadRequest);
    expect((broken as AnthropicBadRequest).message).toMatch(
      /messages\.2\.content\.0\.content\.1\.source\.data: the data does not match/,
    );
    anthropic.enqueue(anthropicText('Seen.'));
    expect(await send(PNG)).toBeUndefined();
  });

  it("Responses: a function_call_output's output list is checked as user content is", async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: responses.baseUrl, maxRetries: 0 });
    const input = (data: string): ResponseInputItem[] => [
      { role: 'user', content: 'Look.' },
      { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{}' },
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: 'shot.png' },
          { type: 'input_image', image_url: `data:image/png;base64,${data}` },
        ],
      },
    ];
    const send = (data: string) =>
      failure(
        client.responses.stream({ model: 'gpt-test', store: false, input: input(data) }).finalResponse(),
      );

    const refused = await send(NOT_PNG);
    expect(refused).toBeInstanceOf(BadRequestError);
    expect((refused as BadRequestError).message).toMatch(
      /input\[2\]\.output\[1\]\.image_url: the data does not match/,
    );
    responses.enqueue(responsesText('Seen.'));
    expect(await send(PNG)).toBeUndefined();
  });
});
