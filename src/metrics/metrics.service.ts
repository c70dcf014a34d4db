import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { LineStore } from '../line/line.store';

const METHODS = new Set(['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS']);

const DEFAULT_GAUGES_NAMED_LIKE_COUNTERS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/**
 * Every Prometheus series the service exports. Labels stay bounded: routes are templates
 * ('unmatched' for anything else), lecture ids only come from code paths that already found
 * the lecture, and per-lecture gauges are read at scrape time for lectures with a queue.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  private readonly tickets = new Counter({
    name: 'enroll_tickets_total',
    help: 'Admission tickets by lecture and event (granted, expired, consumed, given_back), counted by this instance',
    labelNames: ['lecture', 'event'] as const,
    registers: [this.registry],
  });
  private readonly enrollOutcomes = new Counter({
    name: 'enroll_outcomes_total',
    help: 'Enroll answers by lecture and outcome (ENROLLED is an enrollment made)',
    labelNames: ['lecture', 'outcome'] as const,
    registers: [this.registry],
  });
  private readonly tickSeconds = new Histogram({
    name: 'enroll_admission_tick_seconds',
    help: 'Duration of one admission cron tick over all waiting lectures',
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  private readonly drawSeconds = new Histogram({
    name: 'enroll_draw_seconds',
    help: "Duration of the Redis call that drew a lecture's pre-queue (and admitted its head)",
    labelNames: ['lecture'] as const,
    buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  private readonly storeErrors = new Counter({
    name: 'enroll_store_errors_total',
    help: 'Requests that failed because PostgreSQL or Redis could not be reached',
    labelNames: ['store'] as const,
    registers: [this.registry],
  });

  private readonly reclaimSeconds = new Histogram({
    name: 'enroll_memory_reclaim_seconds',
    help: 'Pauses of the full collections that gave memory back once the service was idle',
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

  private readonly loopUtilization = new Gauge({
    name: 'enroll_eventloop_utilization_ratio',
    help: 'Share of the last second the event loop was busy (what decides when the service is idle)',
    registers: [this.registry],
  });

  private readonly positionEvery = new Gauge({
    name: 'enroll_position_interval_seconds',
    help: "Time a waiting student's changed position may wait for its frame on the live streams: 1 s; 2, then 3 s after two seconds in a row over 90% busy, halved back by one under 60%; shorter when slow position ticks would leave a position waiting past 5 s",
    registers: [this.registry],
  });

  private readonly autoTickets = new Gauge({
    name: 'enroll_auto_tickets_in_flight',
    help: 'Tickets of auto-enrolling students this instance granted whose enrolls still run (AUTO_ENROLL_IN_FLIGHT caps them)',
    registers: [this.registry],
  });

  private readonly clearances = new Counter({
    name: 'enroll_clearance_verdicts_total',
    help: 'Auto-enrolling students judged before a ticket (AUTO_ENROLL_CLEARANCE) by verdict (clear, wait, refuse) and by what judged (mirror: the copy of their seats in Redis; postgres)',
    labelNames: ['verdict', 'by'] as const,
    registers: [this.registry],
  });

  /** One Redis read per scrape, shared by both per-lecture gauges (collected concurrently). */
  private queueScrape?: Promise<QueueFigures[]>;

  constructor(private readonly line: LineStore) {
    collectDefaultMetrics({ register: this.registry });
    // prom-client's totals of active handles, requests and resources are gauges named *_total,
    // which Prometheus' naming rules (promtool check metrics) keep for counters; the same
    // figures stay available, by type, as nodejs_active_handles / _requests / _resources.
    for (const name of DEFAULT_GAUGES_NAMED_LIKE_COUNTERS) this.registry.removeSingleMetric(name);
    const perLecture = (name: string, help: string, figure: keyof Omit<QueueFigures, 'id'>) => {
      const gauge: Gauge<'lecture'> = new Gauge({
        name,
        help,
        labelNames: ['lecture'] as const,
        registers: [this.registry],
        collect: async () => {
          gauge.reset();
          for (const f of await this.queueFigures()) gauge.set({ lecture: f.id }, f[figure]);
        },
      });
    };
    perLecture('enroll_queue_length', 'Students waiting, per watched lecture', 'waiting');
    perLecture(
      'enroll_active_tickets',
      'Unconsumed admission tickets, per watched lecture',
      'active',
    );
  }

  request(method: string, route: string | undefined, status: number, seconds: number): void {
    const labels = {
      method: METHODS.has(method) ? method : 'OTHER',
      route: route ?? 'unmatched',
      status: String(status),
    };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
  }

  ticketEvent(
    lectureId: number,
    event: 'granted' | 'expired' | 'consumed' | 'given_back',
    n = 1,
  ): void {
    if (n > 0) this.tickets.inc({ lecture: String(lectureId), event }, n);
  }

  enrollOutcome(lectureId: number, outcome: string): void {
    this.enrollOutcomes.inc({ lecture: String(lectureId), outcome });
  }

  tick(seconds: number): void {
    this.tickSeconds.observe(seconds);
  }

  draw(lectureId: number, seconds: number): void {
    this.drawSeconds.observe({ lecture: String(lectureId) }, seconds);
  }

  eventLoopUtilization(share: number): void {
    this.loopUtilization.set(share);
  }

  positionInterval(seconds: number): void {
    this.positionEvery.set(seconds);
  }

  autoTicketsInFlight(n: number): void {
    this.autoTickets.set(n);
  }

  clearanceVerdict(verdict: 'clear' | 'wait' | 'refuse', by: 'mirror' | 'postgres'): void {
    this.clearances.inc({ verdict, by });
  }

  memoryReclaimed(seconds: number): void {
    this.reclaimSeconds.observe(seconds);
  }

  storeError(store: 'postgres' | 'redis' | 'unknown'): void {
    this.storeErrors.inc({ store });
  }

  private queueFigures(): Promise<QueueFigures[]> {
    this.queueScrape ??= this.readQueueFigures().finally(() =>
      setImmediate(() => (this.queueScrape = undefined)),
    );
    return this.queueScrape;
  }

  private async readQueueFigures(): Promise<QueueFigures[]> {
    try {
      return await this.line.gauges();
    } catch {
      return []; // Redis down: the per-lecture gauges are absent from this scrape; the rest report
    }
  }
}

type QueueFigures = Awaited<ReturnType<LineStore['gauges']>>[number];
