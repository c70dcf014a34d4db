import { IsIn } from 'class-validator';
import { IsOmittable } from '../common/validators';
import { AdmissionSettingsView } from '../lectures/lecture.view';
import { Meeting } from '../lectures/meetings';

export class ImportQuery {
  /** `true`: answer the same report and change nothing. */
  @IsOmittable() @IsIn(['true', 'false']) dryRun?: 'true' | 'false';
}

/** The JSON body of an import, and of the JSON export. */
export class CatalogBody {
  /** up to 20,000 sections */
  sections: CatalogSectionView[];
}

/** A section as `GET /terms/:term/catalog` answers it (and an import takes it), in the CSV's column order. */
export class CatalogSectionView {
  ref: string;
  title: string;
  courseCode: string | null;
  component: string;
  /**
   * refs of the primary sections it is taken with, in the primaries' id order (a primary
   * without a ref cannot be named: left out here, and kept by an import)
   */
  primaryRefs: string[];
  credits: number;
  capacity: number;
  meetings: Meeting[];
  instructor: string | null;
  location: string | null;
  opensAt: string;
  closesAt: string | null;
  admission: AdmissionSettingsView;
}

export class ImportReportView {
  created: number;
  updated: number;
  unchanged: number;
  /** lectures of the term, with a ref or without, the import did not name */
  absent: number;
  /** every ref of the import: its lecture's id (null on a dry run for one it would create) */
  ids: Record<string, number | null>;
}

export class RosterItem {
  studentId: string;
  /** ISO 8601 */
  enrolledAt: string;
  /** the queue sequence number of the ticket consumed (null: unknown) */
  queueSeq: number | null;
  /** the secondary sections held with it (none yet) */
  sections: number[];
}

export class RosterView {
  items: RosterItem[];
}
