import {
  ArgumentMetadata,
  Injectable,
  Type,
  ValidationError,
  ValidationPipe,
} from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { bodyTextOf } from './body-text';
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

/** Bodies remembered valid per DTO (each up to MEMO_BODY_CHARS long). */
const MEMO_SIZE = 1_000;

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
    if (type === 'body' && metatype && this.toValidate(metadata)) {
      const text = isEmpty(value) ? '{}' : bodyTextOf(value as object);
      if (text !== undefined) return this.memoized(metatype, metadata, value as object, text);
    }
    return super.transform(value, metadata);
  }

  /** Per DTO, the texts of bodies found valid whose DTO is the body's own fields. */
  private readonly validBodies = new Map<Type<unknown>, LRUCache<string, true>>();

  /**
   * A small body (a plain enroll sends none; a package's sends the same few lists of sections)
   * is judged once per DTO and text, then answered with a fresh instance holding its fields, as
   * the full transform gives: class-transformer and class-validator cost a hot lecture's enroll
   * some 40 µs of the service's CPU each time for the same answer. Only bodies whose fields are
   * JSON primitives or lists of them, and whose DTO came out as exactly those fields, the same
   * values (no default, no transform: a date-time made a Date is not), are remembered; DTO
   * validators are pure functions of the body.
   * A body that fails goes through the full check every time, for its message.
   */
  private async memoized(
    metatype: Type<unknown>,
    metadata: ArgumentMetadata,
    value: object,
    text: string,
  ): Promise<unknown> {
    const known = this.validBodies.get(metatype);
    if (known?.get(text)) return Object.assign(new metatype() as object, value);
    const dto = await super.transform(value, metadata);
    if (isFlat(value) && sameFields(dto as object, value)) {
      if (known) known.set(text, true);
      else
        this.validBodies.set(
          metatype,
          new LRUCache<string, true>({ max: MEMO_SIZE }).set(text, true),
        );
    }
    return dto;
  }

  /** Route params stay strings here; their own pipes (ParseIdPipe) decide what is valid. */
  protected override transformPrimitive(value: unknown): unknown {
    return value;
  }
}

const primitive = (v: unknown) => v === null || typeof v !== 'object';

/** Every field a JSON primitive or a list of them: a DTO copies such a body as it is. */
function isFlat(value: object): boolean {
  return Object.values(value).every(
    (v) => primitive(v) || (Array.isArray(v) && v.every(primitive)),
  );
}

/**
 * The DTO holds exactly the body's fields, each the same value (a date-time the DTO turned into
 * a Date, a default it added, a value it changed: not the same, so never answered from memory).
 */
function sameFields(dto: object, body: object): boolean {
  const keys = Object.keys(body);
  const d = dto as Record<string, unknown>;
  const b = body as Record<string, unknown>;
  // (a DTO class's declared fields are own properties, undefined where the body has none)
  if (Object.keys(d).filter((k) => d[k] !== undefined).length !== keys.length) return false;
  return keys.every((k) => {
    const [x, y] = [d[k], b[k]];
    if (primitive(y)) return x === y;
    return Array.isArray(x) && Array.isArray(y) && x.length === y.length && x.every((e, i) => e === y[i]); // prettier-ignore
  });
}
