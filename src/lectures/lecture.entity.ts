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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** Bumped by every change; Redis keeps the lecture's facts of the highest version it saw. */
  @VersionColumn()
  version: number;
}
