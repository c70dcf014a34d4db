import { Controller, Get, Headers, Param, Put, Query, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Roles } from '../auth/roles.decorator';
import { ParseIdPipe } from '../common/parse-id.pipe';
import { ApiErrors } from '../docs/api-errors.decorator';
import { ParseTermPipe } from '../terms/term-params';
import { rosterToCsv, sectionsToCsv } from './catalog-csv';
import { CatalogBody, ImportQuery, ImportReportView, RosterView } from './catalog.dto';
import { CatalogService } from './catalog.service';
import { RosterService } from './roster.service';

export const CATALOG_ROUTE = '/terms/:term/catalog';
const CSV = 'text/csv; charset=utf-8';

/** CSV when the request asks for it (`Accept: text/csv`), else the JSON answer. */
function negotiated<T>(
  accept: string | undefined,
  reply: FastifyReply,
  json: T,
  csv: () => string,
): T | string {
  // prettier-ignore
  if (!/\btext\/csv\b/i.test(accept ?? '')) return json;
  reply.header('content-type', CSV);
  return csv();
}

@ApiTags('catalog')
@Controller()
export class CatalogController {
  constructor(
    private readonly catalog: CatalogService,
    private readonly rosters: RosterService,
  ) {}

  /**
   * A term's sections in one request, JSON or CSV (`Content-Type: text/csv`), up to 20,000 and
   * BULK_BODY_LIMIT_MB. All or nothing: any invalid section and the answer is 400 with every
   * one listed in `errors`, and nothing changes. Matched by `ref`: a new one is created as
   * `POST /lectures` would, an existing one updated as `PATCH` would (an omitted field keeps its
   * value), one whose values are all the same left untouched; the term's lectures the import
   * does not name are left as they are. `?dryRun=true` answers the same and changes nothing.
   */
  @ApiConsumes('application/json', 'text/csv')
  @ApiBody({ type: CatalogBody })
  @ApiErrors('FORBIDDEN', 'PAYLOAD_TOO_LARGE')
  @ApiOperation({ summary: "Import a term's catalog of sections (JSON or CSV)" })
  @Put('terms/:term/catalog')
  @Roles('admin')
  import(
    @Param('term', ParseTermPipe) term: string,
    @Query() q: ImportQuery,
    @Req() req: FastifyRequest,
  ): Promise<ImportReportView> {
    const input = typeof req.body === 'string' ? { csv: req.body } : { json: req.body };
    return this.catalog.import(term, input, q.dryRun === 'true');
  }

  /** The term's lectures that have a `ref`, as an import takes them (re-importing changes nothing). */
  @ApiProduces('application/json', 'text/csv')
  @ApiErrors('FORBIDDEN')
  @ApiOperation({ summary: "A term's catalog, JSON or (Accept: text/csv) CSV" })
  @ApiOkResponse({ type: CatalogBody })
  @Get('terms/:term/catalog')
  @Roles('admin')
  async export(
    @Param('term', ParseTermPipe) term: string,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<CatalogBody | string> {
    const sections = await this.catalog.export(term);
    return negotiated(accept, reply, { sections }, () => sectionsToCsv(sections));
  }

  /** The students holding a seat, by enrolledAt then studentId; CSV with `Accept: text/csv`. */
  @ApiProduces('application/json', 'text/csv')
  @ApiErrors('FORBIDDEN', 'LECTURE_NOT_FOUND')
  @ApiOperation({ summary: "A lecture's roster, JSON or (Accept: text/csv) CSV" })
  @ApiOkResponse({ type: RosterView })
  @Get('lectures/:id/roster')
  @Roles('admin')
  async roster(
    @Param('id', ParseIdPipe) id: number,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RosterView | string> {
    const items = await this.rosters.roster(id);
    return negotiated(accept, reply, { items }, () => rosterToCsv(items));
  }
}
