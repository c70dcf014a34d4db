/** The live tick: positions are recomputed this often (API.md: at most once a second). */
export const POSITION_TICK_MS = 1000;
/** A changed position is sent at most once a second (API.md)… */
export const POSITION_MIN_MS = 1000;
/**
 * At a tick, a position sent less than this ago is kept until the next: the ticks are a second
 * apart, but each shows its positions only once every lecture's queue is read, a little later
 * or sooner than the one before.
 */
export const POSITION_KEEP_MS = 900;
/** …and while the event loop is saturated, at most this far apart… */
export const POSITION_MAX_MS = 3000;
/** …always within API.md's "at least every 5 s", with half a second to spare. */
export const POSITION_DEADLINE_MS = 4500;
/**
 * Two ticks in a row busier than this double the time between one student's position frames
 * (one busy second alone, a collection or a burst of joins, changes nothing)…
 */
export const BUSY_UTILIZATION = 0.9;
/** …and one calmer than this halves it again (between the two, it stays as it is). */
export const CALM_UTILIZATION = 0.6;

/**
 * How often a waiting student's changed position is sent, by how busy the event loop was over
 * the last position tick. On an opening morning positions were most of the streams' frames
 * (12,600 a second at 5,000 students, each a write system call) while admissions, enrolls and
 * the seats behind them waited for the same loop. Positions only inform; an admission is sent
 * at once whatever this says. So a saturated loop sends them less often, within the contract's
 * "at most once a second, at least every 5 s", and a calm one every second again.
 */
export class PositionPacing {
  private everyMs = POSITION_MIN_MS;
  private busyBefore = false;

  /** One tick's utilization (0–1) in; the time between a student's position frames out (ms). */
  next(utilization: number): number {
    const busy = utilization > BUSY_UTILIZATION;
    if (busy && this.busyBefore) {
      this.everyMs = Math.min(POSITION_MAX_MS, this.everyMs * 2);
    } else if (utilization < CALM_UTILIZATION) {
      this.everyMs = Math.max(POSITION_MIN_MS, this.everyMs / 2);
    }
    this.busyBefore = busy;
    return this.everyMs;
  }
}

/**
 * The interval a tick may use and still send every waiting student a position within the
 * deadline. A watch sent at one tick is due at the first tick that starts `everyMs` less half a
 * tick later (its ticks' own jitter); that tick may start up to one tick gap after that and reach
 * the watch up to one tick's duration into it. Slow ticks (a saturated loop, Redis answering
 * late) leave less room, and below a second every tick sends, as without pacing. The last tick's
 * gap and duration stand for the next ones'.
 */
export function withinDeadline(everyMs: number, tickGapMs: number, tickMs: number): number {
  const room = POSITION_DEADLINE_MS + POSITION_TICK_MS / 2 - tickGapMs - tickMs;
  return Math.max(POSITION_MIN_MS, Math.min(everyMs, room));
}
