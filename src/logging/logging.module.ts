import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/** What the request pipeline leaves on the raw request for the log line (see app.factory.ts). */
export type LoggedRequest = IncomingMessage & { routeTemplate?: string; userId?: string };

/**
 * Structured JSON logs through pino: one line per request (method, URL, route template,
 * status, latency in ms, user id — never a token or any header), levels from LOG_LEVEL, and
 * pretty output only with LOG_PRETTY=true.
 */
@Module({
  imports: [
    LoggerModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        pinoHttp: {
          level: config.logLevel,
          transport: config.logPretty ? { target: 'pino-pretty' } : undefined,
          quietReqLogger: true,
          serializers: {
            req: (req: IncomingMessage) => ({ method: req.method, url: req.url }),
            res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
          },
          customProps: (req: IncomingMessage) => {
            const r = req as LoggedRequest;
            return { route: r.routeTemplate, userId: r.userId };
          },
          customSuccessMessage: () => 'request',
          customErrorMessage: () => 'request failed',
          customLogLevel: (_req: IncomingMessage, res: ServerResponse, err?: Error) =>
            err || res.statusCode >= 500 ? 'error' : 'info',
        },
      }),
    }),
  ],
})
export class LoggingModule {}
