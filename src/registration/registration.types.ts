/**
 * Who may register when (API.md v4): a term's registration windows, a student's record in a
 * term, and the holds that block a student in every term. Times are ms since the epoch.
 */

/** Which students a window is for: for every key given, the record has a value in the list. */
export interface WindowMatch {
  years?: number[];
  majors?: string[];
  groups?: string[];
}

export interface RegistrationWindow {
  name: string;
  opensAt: number;
  /** null: never closes */
  closesAt: number | null;
  match: WindowMatch;
  /** caps the credit limit of the students it is in force for, while it is (null: no cap) */
  maxCredits: number | null;
  /** SHA-256 of its seed: a window dropped and made again under its name has a new one */
  seedCommitment: string;
}

/** A student's record in a term (the defaults: no year, no majors or groups, no own limit). */
export interface StudentRecord {
  year: number | null;
  majors: string[];
  groups: string[];
  maxCredits: number | null;
}

export const NO_RECORD: StudentRecord = Object.freeze({
  year: null,
  majors: [],
  groups: [],
  maxCredits: null,
}) as StudentRecord;

export interface StudentHold {
  code: string;
  message: string;
}

/** API.md v4: a term has at most 50 windows. */
export const MAX_WINDOWS = 50;
