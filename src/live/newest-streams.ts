import { Opening, StudentStream, isOlder } from './student-stream';

/**
 * One student's stream per key (a lecture, or a term) on this instance: of two opened a moment
 * apart, on any instances, the one opened last stays (API.md v4, Corrections). Opened last
 * means the request came last, not its reads: the earlier opening may finish last — here, or
 * here after the later one's news came from another instance — and must then end itself, not
 * the later stream. So an opening is registered before its first await, the news heard while
 * it opens is kept for it, and it is compared with both when it finishes.
 */
export class NewestStreams<S extends StudentStream> {
  private readonly streams = new Map<string, S>();
  /** per key: openings in progress here, and the newest stream announced meanwhile */
  private readonly openings = new Map<string, { count: number; newest?: Opening }>();

  get size(): number {
    return this.streams.size;
  }

  get(key: string): S | undefined {
    return this.streams.get(key);
  }

  values(): S[] {
    return [...this.streams.values()];
  }

  /** An opening starts; `settle` must follow on every path it takes. */
  begin(key: string): void {
    const pending = this.openings.get(key);
    if (pending) pending.count += 1;
    else this.openings.set(key, { count: 1 });
  }

  /**
   * The opening is done; whether it is still the newest. When true, `add` it before any await
   * (the comparison and the registration are one step).
   */
  settle(key: string, opening: Opening): boolean {
    const pending = this.openings.get(key);
    const newest = pending?.newest;
    if (pending && --pending.count === 0) this.openings.delete(key);
    const here = this.streams.get(key);
    return !(here && isOlder(opening, here)) && !(newest && isOlder(opening, newest));
  }

  /** Registers a stream that settled as the newest; the older one it replaces, to be ended. */
  add(key: string, s: S): S | undefined {
    const older = this.streams.get(key);
    this.streams.set(key, s);
    return older === s ? undefined : older;
  }

  /** A stream was announced (by any instance): the older stream here it replaces, if any. */
  heard(key: string, opened: Opening): S | undefined {
    const pending = this.openings.get(key);
    if (pending && (!pending.newest || isOlder(pending.newest, opened))) pending.newest = opened;
    const here = this.streams.get(key);
    return here && here.id !== opened.id && isOlder(here, opened) ? here : undefined;
  }

  /** Forgets the stream if it is still the one registered for its key. */
  delete(key: string, s: S): void {
    if (this.streams.get(key) === s) this.streams.delete(key);
  }
}
