import { Column, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { Lecture } from '../lectures/lecture.entity';

@Entity('enrollment')
@Unique('enrollment_lecture_student_key', ['lectureId', 'studentId'])
export class Enrollment {
  @PrimaryGeneratedColumn('identity', { type: 'bigint' })
  id: string;

  @Column('int', { name: 'lecture_id' })
  lectureId: number;

  @ManyToOne(() => Lecture, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'lecture_id' })
  lecture?: Lecture;

  @Column('varchar', { name: 'student_id', length: 64 })
  studentId: string;

  @Column('timestamptz', { name: 'enrolled_at', default: () => 'now()' })
  enrolledAt: Date;

  /** The queue sequence number of the ticket this enrollment consumed (null: before v2). */
  @Column('bigint', { name: 'queue_seq', nullable: true })
  queueSeq: string | null;
}
