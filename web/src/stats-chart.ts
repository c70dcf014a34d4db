import type uPlotType from 'uplot';
import { LectureStats } from './api.js';
import { h } from './dom.js';

// uPlot is loaded by its own <script> (vendor/uPlot.iife.min.js): a global, typed from its package.
const UPlot = (window as unknown as { uPlot: typeof uPlotType }).uPlot;

/** Points kept: one a second, the last ten minutes. */
const KEEP = 600;

/**
 * A live line chart of one lecture: waiting, active tickets and seats left (left axis) and
 * admissions per second (right axis), the last ten minutes. The latest figures are also
 * written out as text beside it, for screen readers and for anyone who wants the number.
 */
export class StatsChart {
  private readonly data: number[][] = [[], [], [], [], []];
  private readonly plot: uPlotType;
  private readonly resizes: ResizeObserver;

  constructor(host: HTMLElement) {
    const box = h('div', {
      class: 'chart',
      role: 'img',
      'aria-label': 'queue, tickets and seats over time',
    });
    host.append(box);
    this.plot = new UPlot(
      {
        width: Math.max(box.clientWidth || host.clientWidth || 600, 280),
        height: 260,
        series: [
          {},
          { label: 'waiting', stroke: '#1f5fd6', width: 2 },
          { label: 'active tickets', stroke: '#9a5b00', width: 2 },
          { label: 'seats left', stroke: '#137a3b', width: 2 },
          { label: 'admitted / s', stroke: '#b3261e', width: 1, dash: [4, 4], scale: 'rate' },
        ],
        axes: [
          {},
          { label: 'students' },
          { side: 1, scale: 'rate', label: 'admitted / s', grid: { show: false } },
        ],
        scales: { x: { time: true }, rate: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        legend: { live: false },
      },
      this.data as uPlotType.AlignedData,
      box,
    );
    this.resizes = new ResizeObserver(() => {
      this.plot.setSize({ width: Math.max(box.clientWidth, 280), height: 260 });
    });
    this.resizes.observe(box);
  }

  push(s: LectureStats): void {
    const row = [
      Date.now() / 1000,
      s.waiting,
      s.activeTickets,
      s.seatsLeft,
      s.admittedPerSecond ?? 0,
    ];
    row.forEach((v, i) => {
      this.data[i].push(v);
      if (this.data[i].length > KEEP) this.data[i].shift();
    });
    this.plot.setData(this.data as uPlotType.AlignedData);
  }

  /** Stops watching the box's size too: an observer left behind keeps the old chart alive. */
  destroy(): void {
    this.resizes.disconnect();
    this.plot.destroy();
  }
}
