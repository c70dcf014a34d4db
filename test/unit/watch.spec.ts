import type { QueueStatusView } from '../../src/queue/queue-status.view';
import { Watch, WatchOwner } from '../../src/live/watch';

/** A watch whose stream records what it sends. */
function watchOf() {
  const sent: QueueStatusView[] = [];
  const owner = { sse: { send: (_: string, s: QueueStatusView) => sent.push(s) }, shown: () => undefined, ended: () => undefined } as unknown as WatchOwner; // prettier-ignore
  return { w: new Watch(1, 's', owner), sent };
}

const status = (over: Partial<QueueStatusView>): QueueStatusView => ({
  lectureId: 1,
  status: 'WAITING',
  position: 3,
  waiting: 10,
  estimatedWaitSeconds: 5,
  ticketExpiresAt: null,
  seatsLeft: 4,
  autoEnroll: false,
  lastRefusal: null,
  ...over,
});

describe('Watch: what a stream is sent again', () => {
  it('a waiting status each time a figure of it moves', () => {
    const { w, sent } = watchOf();
    w.show(status({}));
    w.show(status({}));
    w.show(status({ position: 2 }));
    w.show(status({ position: 2, seatsLeft: 3 }));
    expect(sent.map((s) => [s.position, s.seatsLeft])).toEqual([[3, 4], [2, 4], [2, 3]]); // prettier-ignore
  });

  it('a status that leaves nothing to wait for, only when it changes to another: not for its figures', () => {
    const { w, sent } = watchOf();
    w.show(status({ status: 'ENROLLED', position: null, seatsLeft: 4 }));
    w.show(status({ status: 'ENROLLED', position: null, seatsLeft: 2, waiting: 7 }));
    w.show(status({ status: 'NOT_QUEUED', position: null, seatsLeft: 3 })); // dropped
    expect(sent.map((s) => [s.status, s.seatsLeft])).toEqual([['ENROLLED', 4], ['NOT_QUEUED', 3]]); // prettier-ignore

    const full = watchOf();
    full.w.show(status({ seatsLeft: 0 }));
    full.w.show(status({ seatsLeft: 0, position: 2, waiting: 9 })); // others left: still full
    full.w.show(status({ seatsLeft: 1, position: 2 })); // a seat given back
    expect(full.sent.map((s) => [s.position, s.seatsLeft])).toEqual([
      [3, 0],
      [2, 1],
    ]);
  });

  it('a waitlist added to a full lecture: the position as it is now is sent, though it did not move since', () => {
    const { w, sent } = watchOf();
    w.show(status({ seatsLeft: 0 }));
    w.show(status({ seatsLeft: 0, position: 2 })); // not sent: nothing to wait for
    w.waitlist = 5;
    w.show(status({ seatsLeft: 0, position: 2 })); // the same as shown, not as sent
    expect(sent.map((s) => s.position)).toEqual([3, 2]);
  });

  it('with a waitlist, waiting in a full lecture still waits: its position is sent as it moves', () => {
    const { w, sent } = watchOf();
    w.waitlist = 5;
    w.show(status({ seatsLeft: 0 }));
    w.show(status({ seatsLeft: 0, position: 2 }));
    expect(sent.map((s) => s.position)).toEqual([3, 2]);
  });
});
