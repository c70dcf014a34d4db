import { Init1764460800000 } from './1764460800000-Init';
import { LectureVersion1764547200000 } from './1764547200000-LectureVersion';
import { FairOpening1764633600000 } from './1764633600000-FairOpening';
import { UndrawnIndex1764720000000 } from './1764720000000-UndrawnIndex';
import { Terms1764806400000 } from './1764806400000-Terms';
import { Plans1764892800000 } from './1764892800000-Plans';
import { SeatReleases1764979200000 } from './1764979200000-SeatReleases';
import { MeetingDates1765065600000 } from './1765065600000-MeetingDates';
import { SectionRefs1765152000000 } from './1765152000000-SectionRefs';
import { MeetingsChecked1765238400000 } from './1765238400000-MeetingsChecked';
import { SectionPackages1765324800000 } from './1765324800000-SectionPackages';
import { RegistrationWindows1765411200000 } from './1765411200000-RegistrationWindows';
import { Notifications1765497600000 } from './1765497600000-Notifications';
import { Waitlist1765584000000 } from './1765584000000-Waitlist';
import { NotificationKeys1765670400000 } from './1765670400000-NotificationKeys';
import { RecordsIndex1765756800000 } from './1765756800000-RecordsIndex';

/** Every migration, in order. Listed explicitly so the app, the CLI and jest load the same set. */
export const MIGRATIONS = [
  Init1764460800000,
  LectureVersion1764547200000,
  FairOpening1764633600000,
  UndrawnIndex1764720000000,
  Terms1764806400000,
  Plans1764892800000,
  SeatReleases1764979200000,
  MeetingDates1765065600000,
  SectionRefs1765152000000,
  MeetingsChecked1765238400000,
  SectionPackages1765324800000,
  RegistrationWindows1765411200000,
  Notifications1765497600000,
  Waitlist1765584000000,
  NotificationKeys1765670400000,
  RecordsIndex1765756800000,
];
