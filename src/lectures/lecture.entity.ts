import type { Meeting } from './meetings';
import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
  VersionColumn,
} from 'typeorm';

@Entity('lecture')
export class Lecture {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column('int')
  capacity: number;

  @Column('int', { name: 'seats_left' })
  seatsLeft: number;

  @Column('timestamptz', { name: 'opens_at' })
  opensAt: Date;

  @Column('timestamptz', { name: 'closes_at', nullable: true })
  closesAt: Date | null;

  @Column('int', { name: 'batch_size' })
  batchSize: number;

  @Column('int', { name: 'ticket_ttl_seconds' })
  ticketTtlSeconds: number;

  @Column('int', { name: 'max_active_tickets' })
  maxActiveTickets: number;

  /** Minutes before opensAt from which joins enter the pre-queue (0: no pre-queue). */
  @Column('int', { name: 'pre_queue_minutes' })
  preQueueMinutes: number;

  /** Students who may still join and wait once no seat is left (0: a full lecture refuses joins). */
  @Column('int')
  waitlist: number;

  /** The draw's secret: never answered or logged before drawnAt. */
  @Column('bytea', { name: 'draw_seed' })
  drawSeed: Buffer;

  /** Lowercase hex SHA-256 of drawSeed, published from the start. */
  @Column('char', { name: 'seed_commitment', length: 64 })
  seedCommitment: string;

  /** When the pre-queue was drawn into the queue (null: not yet). */
  @Column('timestamptz', { name: 'drawn_at', nullable: true })
  drawnAt: Date | null;

  /** How many pre-queued students were drawn. */
  @Column('int', { name: 'pre_queued_count', nullable: true })
  preQueuedCount: number | null;

  /** The queue sequence number the draw gave its first student. */
  @Column('bigint', { name: 'draw_first_seq', nullable: true })
  drawFirstSeq: string | null;

  /** The term the lecture is taught in; its enrollments count towards the term's rules. */
  @Column('varchar', { length: 32 })
  term: string;

  /** Lectures with one course code in a term are sections of one course (null: none). */
  @Column('varchar', { name: 'course_code', length: 32, nullable: true })
  courseCode: string | null;

  @Column('int')
  credits: number;

  /** The registrar's own id of the section, unique within the term (null: none). */
  @Column('varchar', { length: 64, nullable: true })
  ref: string | null;

  /** LEC, LAB, DIS, …: the kind of teaching this section is. */
  @Column('varchar', { length: 8 })
  component: string;

  /** The primaries a secondary section is taken with (empty: a primary section). */
  @Column('int', { name: 'primary_ids', array: true, default: () => "'{}'" })
  primaryIds: number[];

  @Column('jsonb')
  meetings: Meeting[];

  // PostgreSQL derives meeting_ranges and meeting_dates from meetings (…-MeetingDates.ts).

  @Column('varchar', { length: 100, nullable: true })
  instructor: string | null;

  @Column('varchar', { length: 100, nullable: true })
  location: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** Bumped by every change; Redis keeps the lecture's facts of the highest version it saw. */
  @VersionColumn()
  version: number;
}
