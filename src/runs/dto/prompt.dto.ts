import { applyDecorators } from '@nestjs/common';
import { ApiProperty, type SchemaObject } from '@nestjs/swagger';
import { ValidateBy } from 'class-validator';
import { PROMPT_MAX_PARTS, promptProblem } from '../../files/prompt-parts';

const PART_SCHEMAS: SchemaObject[] = [
  {
    type: 'object',
    required: ['type', 'text'],
    additionalProperties: false,
    properties: { type: { type: 'string', enum: ['text'] }, text: { type: 'string', minLength: 1 } },
  },
  {
    type: 'object',
    required: ['type', 'fileId'],
    additionalProperties: false,
    properties: { type: { type: 'string', enum: ['file'] }, fileId: { type: 'string', format: 'uuid' } },
  },
  {
    type: 'object',
    required: ['type', 'url'],
    additionalProperties: false,
    properties: {
      type: { type: 'string', enum: ['file'] },
      url: { type: 'string', description: 'data:<type>;base64,…' },
      name: { type: 'string' },
    },
  },
];

/**
 * A prompt field ("Attachments"): a non-empty string, or a non-empty list of parts — text, a file
 * of the caller's by id, a file as a data URL (stored as a file first).
 */
export function ApiPrompt(example: string): PropertyDecorator {
  return applyDecorators(
    ApiProperty({
      oneOf: [
        { type: 'string', minLength: 1, example },
        { type: 'array', minItems: 1, maxItems: PROMPT_MAX_PARTS, items: { oneOf: PART_SCHEMAS } },
      ],
    }),
    ValidateBy({
      name: 'isPrompt',
      validator: {
        validate: (value: unknown, args) => promptProblem(value, args?.property ?? 'prompt') === null,
        defaultMessage: (args) => promptProblem(args?.value, args?.property ?? 'prompt') ?? '',
      },
    }),
  );
}
