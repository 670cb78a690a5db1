import { requireScope } from '../auth.ts';
import { page, parseListQuery } from '../list-query.ts';
import { newestFirst, recordById, type RouteContext } from './route-context.ts';

/** Uploaded data files' metadata (files:read); `name` matches a case-insensitive substring. */
export function fileRoutes({ router, store }: RouteContext): void {
  router.get('/v1/files', requireScope('files:read'), (ctx) => {
    const query = parseListQuery(ctx.query, {
      name: 'string',
      status: ['uploaded', 'processing', 'ready', 'failed'],
      file_type: ['csv', 'parquet', 'json'],
    });
    const { name, status, file_type } = query.filters;
    ctx.body = page(
      newestFirst(store.files, 'created_at').filter(
        (f) =>
          (name === undefined || f.name.toLowerCase().includes(String(name).toLowerCase())) &&
          (status === undefined || f.status === status) &&
          (file_type === undefined || f.file_type === file_type),
      ),
      query,
    );
  });
  router.get('/v1/files/:id', requireScope('files:read'), (ctx) => {
    ctx.body = { data: recordById(store.files, ctx.params.id, 'data file') };
  });
}
