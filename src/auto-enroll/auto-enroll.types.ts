/** What an auto-enrolling student's enroll carries, as their own POST …/enroll body would. */
export interface AutoSettings {
  sections?: number[];
  swapFrom?: number;
}

/** Why the service gave a place up (API.md v4: `lastRefusal` of the status). */
export interface LastRefusal {
  code: string;
  message: string;
  conflictsWith?: number[];
}

/** A value of a lecture's auto hash (settings, a refusal); absent or unreadable reads as none. */
export function parseAutoValue<T>(value: string | null | undefined): T | null {
  if (!value) return null;
  try {
    return JSON.parse(value) as T;
  } catch {
    return null;
  }
}

/** What the status says of the service enrolling the student itself. */
export interface AutoState {
  autoEnroll: boolean;
  lastRefusal: LastRefusal | null;
}
