import { ValidationPipe } from '@nestjs/common';

/**
 * Type-strict bodies and queries: nothing is coerced, unknown fields are refused. The 400's message
 * list names each field (class-validator's "prompt must be a string"), with the path from the body's
 * root for nested ones ("clientTools.0.function.name must be a string"). Rejected values are never
 * echoed: they may be long prompts or secrets.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
  });
}
