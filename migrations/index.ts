import { Init1764460800000 } from './1764460800000-Init';

/** Every migration, in order. Listed explicitly so the app, the CLI and jest load the same set. */
export const MIGRATIONS = [Init1764460800000];
