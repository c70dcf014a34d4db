type Check = 'up' | 'down';

export class HealthChecks {
  postgres: Check;
  redis: Check;
}

/** GET /health: `ok` when both stores answer; a store that does not is marked `down`. */
export class HealthBody {
  status: 'ok' | 'error';
  checks: HealthChecks;
}
