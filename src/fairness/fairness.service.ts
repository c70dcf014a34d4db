import { Injectable } from '@nestjs/common';
import { AppError, lectureNotFound } from '../common/error-codes';
import { MAX_ID } from '../common/parse-id.pipe';
import { AdmissionsQuery } from './dto/admissions.query';
import { FairnessRecords } from './fairness.records';
import { AdmissionPage, DrawView } from './fairness.view';

const DEFAULT_PAGE = 100;

/** The audit trail of a lecture's opening, read from PostgreSQL (it survives Redis). */
@Injectable()
export class FairnessService {
  constructor(private readonly records: FairnessRecords) {}

  async draw(lectureId: number): Promise<DrawView> {
    const draw = await this.drawOf(lectureId);
    if (!draw.drawnAt) throw new AppError('NOT_OPEN', 'the draw runs at opensAt; it has not yet');
    return {
      seed: draw.seed.toString('hex'),
      seedCommitment: draw.seedCommitment,
      drawnAt: draw.drawnAt.toISOString(),
      items: await this.records.drawn(lectureId),
      windows: await this.records.windowDraws(lectureId),
    };
  }

  async admissions(lectureId: number, q: AdmissionsQuery): Promise<AdmissionPage> {
    await this.drawOf(lectureId); // LECTURE_NOT_FOUND
    const limit = q.limit ?? DEFAULT_PAGE;
    const rows = await this.records.admissions(lectureId, limit + 1, q.after);
    const page = rows.slice(0, limit);
    return {
      items: page.map((r) => ({
        studentId: r.studentId,
        admittedAt: r.admittedAt.toISOString(),
        queueSeq: r.queueSeq,
        via: r.via,
      })),
      next: rows.length > limit ? page[page.length - 1].id : null,
    };
  }

  private async drawOf(lectureId: number) {
    const draw = lectureId <= MAX_ID ? await this.records.drawOf(lectureId) : null;
    if (!draw) throw lectureNotFound(lectureId);
    return draw;
  }
}
