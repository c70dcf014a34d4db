import request from 'supertest';
import { adminHeaders, studentHeaders } from './tokens';

/** Small HTTP helpers shared by the e2e specs. */
export async function createLecture(
  url: string,
  body: object = {},
): Promise<{ id: number } & Record<string, unknown>> {
  const res = await request(url)
    .post('/lectures')
    .set(adminHeaders())
    .send({ title: 'Lecture', capacity: 10, ...body });
  if (res.status !== 201) throw new Error(`create lecture: ${res.status} ${res.text}`);
  return res.body;
}

export const join = (url: string, id: number, student: string) =>
  request(url).post(`/lectures/${id}/queue`).set(studentHeaders(student));
export const queueStatus = (url: string, id: number, student: string) =>
  request(url).get(`/lectures/${id}/queue`).set(studentHeaders(student));
export const leave = (url: string, id: number, student: string) =>
  request(url).delete(`/lectures/${id}/queue`).set(studentHeaders(student));
export const stats = (url: string, id: number) =>
  request(url).get(`/lectures/${id}/stats`).set(adminHeaders());

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Whether `promise` settles within `ms`. Its timer is cleared either way: one left running keeps
 * a jest worker from exiting (jest force-exits it, and `npm test` fails on that).
 */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `probe` until it returns true or `ms` pass. */
export async function eventually(
  probe: () => Promise<boolean>,
  ms: number,
  every = 50,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await sleep(every);
  }
}

export const enroll = (url: string, id: number, student: string) =>
  request(url).post(`/lectures/${id}/enroll`).set(studentHeaders(student));
export const cancelEnrollment = (url: string, id: number, student: string) =>
  request(url).delete(`/lectures/${id}/enroll`).set(studentHeaders(student));
