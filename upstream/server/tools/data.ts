import { DATA_FILE } from './record-schemas.ts';
import { input, listOutput, oneOf, pagination, recordOutput, text, uuid } from './schema-fragments.ts';
import { READ_ONLY, getRequest, listRequest, type ToolDefinition } from './tool-definition.ts';

export const dataTools: ToolDefinition[] = [
  {
    name: 'list_data_files',
    title: 'List uploaded data files',
    description:
      'List your uploaded data files (CSV, Parquet, JSON datasets for research and backtests), newest first, with processing status, ' +
      "size and row count. Filter by a name substring, status or file_type. Use get_data_file for one file's columns and checksum. " +
      'Returns {data, count}; page with limit/offset.',
    category: 'data',
    requiredScopes: ['files:read'],
    annotations: READ_ONLY,
    inputSchema: input({
      name: text('Case-insensitive substring of the file name, e.g. "aapl".'),
      status: oneOf(['uploaded', 'processing', 'ready', 'failed'], 'Only files in this processing status.'),
      file_type: oneOf(['csv', 'parquet', 'json'], 'Only files of this format.'),
      ...pagination(),
    }),
    outputSchema: listOutput(DATA_FILE),
    request: listRequest('/v1/files'),
  },
  {
    name: 'get_data_file',
    title: 'Get data file metadata',
    description:
      'Metadata of one uploaded file by its id: name, format, status, size, row count, columns with types, SHA-256 checksum, and the ' +
      'processing error if it failed. It does not return the file contents. Returns {data}.',
    category: 'data',
    requiredScopes: ['files:read'],
    annotations: READ_ONLY,
    inputSchema: input({ file_id: uuid('Data file UUID (the id field of list_data_files).') }, ['file_id']),
    outputSchema: recordOutput(DATA_FILE),
    request: getRequest('/v1/files', 'file_id'),
  },
];
