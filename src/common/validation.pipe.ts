import {
  ArgumentMetadata,
  Injectable,
  Type,
  ValidationError,
  ValidationPipe,
} from '@nestjs/common';
import { AppError } from './error-codes';

/** Flattens class-validator's tree into "admission.batchSize must not be less than 1". */
export function validationMessages(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix + e.property;
    const own = Object.values(e.constraints ?? {}).map((m) =>
      m.startsWith(e.property) ? path + m.slice(e.property.length) : `${path}: ${m}`,
    );
    return [...own, ...validationMessages(e.children ?? [], `${path}.`)];
  });
}

const isEmpty = (value: unknown) => Object.keys(value as object).length === 0;

/**
 * Strict validation for every body, query and param DTO: unknown fields are rejected, values
 * are never coerced from one JSON type to another, and the message names the field.
 */
@Injectable()
export class StrictValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      transformOptions: { enableImplicitConversion: false },
      validationError: { target: false, value: false },
      exceptionFactory: (errors) =>
        new AppError('VALIDATION_FAILED', validationMessages(errors).join('; ') || 'invalid input'),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // No body at all is an empty object: a route whose body is all optional takes none.
    if (metadata.type === 'body' && value === undefined) value = {};
    const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
    if (metadata.type === 'body' && !isObject) {
      throw new AppError('VALIDATION_FAILED', 'body must be a JSON object');
    }
    const { type, metatype } = metadata;
    if (type === 'body' && metatype && this.toValidate(metadata) && isEmpty(value)) {
      return this.emptyBody(metatype, metadata);
    }
    return super.transform(value, metadata);
  }

  // Whether an empty body is valid for a DTO never changes: judged once per DTO.
  private readonly emptyBodyValid = new Map<Type<unknown>, boolean>();

  /**
   * An empty body (a plain enroll sends none) is checked once per DTO and then answered with a
   * fresh instance, as the full transform would give: class-transformer and class-validator
   * cost a hot lecture's enroll ~40 µs of the service's CPU each time for the same answer.
   * A DTO an empty body fails goes through the full check every time, for its message.
   */
  private async emptyBody(metatype: Type<unknown>, metadata: ArgumentMetadata): Promise<unknown> {
    if (this.emptyBodyValid.get(metatype)) return new metatype();
    const dto = await super.transform({}, metadata).catch((err: unknown) => {
      this.emptyBodyValid.set(metatype, false);
      throw err;
    });
    this.emptyBodyValid.set(metatype, true);
    return dto;
  }

  /** Route params stay strings here; their own pipes (ParseIdPipe) decide what is valid. */
  protected override transformPrimitive(value: unknown): unknown {
    return value;
  }
}
