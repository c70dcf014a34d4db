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

/** What the status says of the service enrolling the student itself. */
export interface AutoState {
  autoEnroll: boolean;
  lastRefusal: LastRefusal | null;
}
