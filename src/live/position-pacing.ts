/** A changed position is sent at most once a second (API.md)… */
export const POSITION_MIN_MS = 1000;
/**
 * …and, however busy the service, at least every 5 s: 3 s leaves room for the position tick's
 * own delay on a loaded event loop, before the 4 s re-read (watches.service.ts) would send it.
 */
export const POSITION_MAX_MS = 3000;
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
