import { ApiError, Registration, call } from './api.js';
import { h, redraw } from './dom.js';
import { errorWords } from './error-banner.js';
import { longDuration } from './format.js';
import { countdownLabel, renderRegistration } from './registration-panel.js';

/**
 * Read again this often while nothing is due sooner: a hold placed or lifted, windows edited,
 * a record imported change the answer without telling the page. Far apart enough that
 * thousands of open pages cost the service little (each read is three PostgreSQL reads).
 */
const REFRESH_MS = 45_000;
/** Never two reads closer than this: an answer still short of a due opening waits a moment. */
const MIN_WAIT_MS = 1_000;
/** Read a moment after a window opens or closes, so the service's clock has surely passed it. */
const SETTLE_MS = 250;
/** After a failed read, try again sooner than REFRESH_MS, doubling up to it. */
const FIRST_RETRY_MS = 5_000;

/**
 * The service's clock as the page estimates it. A countdown to a window's opening counts on
 * the service's time, not the device's (which may be minutes off): the answer's `now` gives
 * the offset, taken at the middle of the round trip (about when the service read its clock).
 */
class ServiceClock {
  private offset = 0;

  set(serviceNow: string, sentAt: number, receivedAt: number): void {
    const at = Date.parse(serviceNow);
    if (Number.isFinite(at)) this.offset = at - (sentAt + receivedAt) / 2;
  }

  now(): number {
    return Date.now() + this.offset;
  }
}

export interface RegistrationHandlers {
  /** a read answered something else than the one before (the first answer included) */
  changed(now: Registration, before: Registration | undefined): void;
}

/**
 * The student's registration status in the term, kept current: read at once, again when the
 * next window of theirs opens (or the one in force closes) by the service's clock, every
 * REFRESH_MS, when the tab is shown again, and whenever the page learns of a refusal by a hold
 * or a window (`refresh`). A countdown to the next opening ticks every second.
 */
export class RegistrationStatus {
  private view?: Registration;
  private readonly clock = new ServiceClock();
  private readonly words = h('div', { 'aria-live': 'polite' });
  private readonly countdownLine = h('p', { class: 'reg-countdown' });
  private readonly note = h('p', { class: 'meta', role: 'status' });
  private timer?: ReturnType<typeof setTimeout>;
  private reading?: Promise<void>;
  /** asked again while a read was in flight: what prompted it may have come after it started */
  private again = false;
  private retryMs = FIRST_RETRY_MS;
  private lastRead = 0;

  constructor(
    private readonly token: string,
    private readonly term: string,
    private readonly root: HTMLElement,
    private readonly on: RegistrationHandlers,
  ) {}

  start(): void {
    this.note.hidden = true;
    this.countdownLine.hidden = true;
    this.root.replaceChildren(this.words, this.countdownLine, this.note);
    setInterval(() => this.tick(), 1000); // the page's lifetime: it shows one term
    document.addEventListener('visibilitychange', this.shown);
    void this.refresh();
  }

  /** Reads the status now; calls made while a read runs are served by one more read after it. */
  refresh(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = undefined;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.reading;
  }

  /** A tab shown again: its timers may have been held back (background tabs, a sleeping laptop). */
  private readonly shown = () => {
    if (document.visibilityState === 'visible' && Date.now() - this.lastRead > MIN_WAIT_MS) void this.refresh(); // prettier-ignore
  };

  private async read(): Promise<void> {
    clearTimeout(this.timer);
    const sentAt = Date.now();
    this.lastRead = sentAt;
    let wait: number;
    try {
      const v = await call<Registration>(this.token, 'GET', `/me/terms/${encodeURIComponent(this.term)}/registration`); // prettier-ignore
      this.clock.set(v.now, sentAt, Date.now());
      const before = this.view;
      this.view = v;
      this.retryMs = FIRST_RETRY_MS;
      this.note.hidden = true;
      this.draw(v);
      if (!before || sayings(before) !== sayings(v)) this.on.changed(v, before);
      wait = this.untilNextChange(v);
    } catch (e) {
      // Said here, not in the page's banner: a background read failing is no error of the
      // student's doing, and the last answer (if any) stands meanwhile.
      this.note.textContent = this.view
        ? `Could not check your registration status just now (${errorWords(e)}). Trying again shortly.`
        : `Your registration status could not be read (${errorWords(e)}). Trying again shortly.`;
      this.note.hidden = false;
      this.root.hidden = false;
      const asked = e instanceof ApiError && e.retryAfterSeconds ? e.retryAfterSeconds * 1000 : 0;
      wait = Math.max(asked, this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, REFRESH_MS);
    }
    this.timer = setTimeout(() => void this.refresh(), wait);
  }

  /** How long until the answer may change by the clock alone: a window opening or closing. */
  private untilNextChange(v: Registration): number {
    const due = [v.nextOpensAt, v.window?.closesAt]
      .filter((t): t is string => !!t)
      .map((t) => Date.parse(t) - this.clock.now() + SETTLE_MS);
    return Math.max(MIN_WAIT_MS, Math.min(REFRESH_MS, ...due));
  }

  private draw(v: Registration): void {
    redraw(this.words, (root) => renderRegistration(root, v));
    this.root.dataset.reason = v.reason ?? 'OPEN';
    const label = countdownLabel(v);
    this.countdownLine.hidden = label === null;
    if (label !== null) {
      this.countdownLine.replaceChildren(
        `${label} `,
        h('span', { class: 'countdown', 'data-testid': 'window-countdown' }),
      );
    } else this.countdownLine.replaceChildren();
    this.tick();
    this.root.hidden = false;
  }

  /** The countdown, on the service's clock; at zero the read scheduled for the opening follows. */
  private tick(): void {
    const at = this.view?.nextOpensAt;
    const el = this.countdownLine.querySelector('[data-testid="window-countdown"]');
    if (!at || !el) return;
    el.textContent = longDuration(Date.parse(at) - this.clock.now());
  }
}

/** What an answer says, but its `now` (which differs on every read): to tell whether it changed. */
const sayings = (v: Registration) => JSON.stringify({ ...v, now: null });
