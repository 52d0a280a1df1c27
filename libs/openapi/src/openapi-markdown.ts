/**
 * The reference for people, rendered from an OpenAPI document built by `buildOpenApi`: one section
 * per operation (access, request body, responses with their schemas and error codes), then the
 * schemas and the error vocabulary. Deterministic, so docs/api.md can be checked for staleness.
 */
type Json = Record<string, unknown>;

/** A text field of the document (descriptions, summaries): '' when absent. */
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export function renderOpenApiMarkdown(doc: Json): string {
  const info = doc.info as Json;
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const components = doc.components as Json;
  const lines: string[] = [
    `# ${String(info.title)} ${String(info.version)}`,
    '',
    '<!-- Generated from the OpenAPI document (GET /openapi.json) by `node scripts/api-reference.mjs`; do not edit. -->',
    '',
    String(info.description),
    '',
    '| method | path | access | summary |',
    '|---|---|---|---|',
  ];
  for (const [path, ops] of Object.entries(paths))
    for (const [method, op] of Object.entries(ops))
      lines.push(
        `| ${method.toUpperCase()} | \`${path}\` | ${String(op['x-tally-access'])} | ${String(op.summary)} |`,
      );
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      lines.push('', `## ${method.toUpperCase()} ${path}`, '', sentence(String(op.summary)));
      if (op.description) lines.push('', text(op.description));
      const access = String(op['x-tally-access']);
      lines.push(
        '',
        access === 'public'
          ? 'Access: public.'
          : `Access: \`Authorization: Bearer <token>\` with the \`${access}\` role.`,
      );
      const params = (op.parameters ?? []) as Json[];
      if (params.length > 0)
        lines.push(
          '',
          'Parameters: ' + params.map((p) => `\`${String(p.name)}\` (${String(p.in)})`).join(', ') + '.',
        );
      const body = op.requestBody as Json | undefined;
      if (body)
        lines.push(
          '',
          `Request body${body.required === false ? ' (optional)' : ''}: ${schemaName(((body.content as Json)['application/json'] as Json).schema as Json)}.`,
        );
      lines.push('', '| status | body | headers | meaning |', '|---|---|---|---|');
      for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
        const content = response.content as Record<string, Json> | undefined;
        const schema = content ? (Object.values(content)[0].schema as Json) : undefined;
        const headers = Object.keys((response.headers ?? {}) as Json)
          .map((h) => `\`${h}\``)
          .join(' ');
        lines.push(
          `| ${status} | ${schema ? schemaName(schema) : '—'} | ${headers || '—'} | ${cell(String(response.description))} |`,
        );
      }
    }
  }
  lines.push('', '## Schemas');
  for (const [name, schema] of Object.entries(components.schemas as Record<string, Json>)) {
    lines.push('', `### ${name}`, '');
    if (schema.description) lines.push(text(schema.description), '');
    const props = schema.properties as Record<string, Json> | undefined;
    if (!props) {
      lines.push(`${schemaName(schema)}`);
      continue;
    }
    const required = new Set((schema.required ?? []) as string[]);
    lines.push('| field | type | required | description |', '|---|---|---|---|');
    for (const [field, p] of Object.entries(props))
      lines.push(
        `| \`${field}\` | ${schemaName(p)} | ${required.has(field) ? 'yes' : 'no'} | ${cell(text(p.description))} |`,
      );
  }
  const headers = components.headers as Record<string, Json>;
  if (Object.keys(headers).length > 0) {
    lines.push('', '## Response headers', '', '| header | meaning |', '|---|---|');
    for (const [name, h] of Object.entries(headers))
      lines.push(`| \`${name}\` | ${cell(String(h.description))} |`);
  }
  lines.push(
    '',
    '## Error codes',
    '',
    'Every refusal that is not a decision is `{code, message, errors?}`.',
    '',
    '| code | status | meaning |',
    '|---|---|---|',
  );
  for (const [code, e] of Object.entries(doc['x-tally-error-codes'] as Record<string, Json>))
    lines.push(`| \`${code}\` | ${(e.statuses as number[]).join(', ')} | ${cell(String(e.meaning))} |`);
  return lines.join('\n') + '\n';
}

/** A short name for a schema: its component, its type, or the alternatives. */
function schemaName(schema: Json): string {
  if (typeof schema.$ref === 'string')
    return `[${schema.$ref.split('/').pop()}](#${schema.$ref.split('/').pop()!.toLowerCase()})`;
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map(schemaName).join(' or ');
  if (Array.isArray(schema.allOf)) {
    const [base, refinement] = schema.allOf as Json[];
    const codes = ((refinement.properties as Json | undefined)?.code as Json | undefined)?.enum as
      string[] | undefined;
    return codes ? `${schemaName(base)} (${codes.map((c) => `\`${c}\``).join(', ')})` : schemaName(base);
  }
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.type === 'array') return `${schemaName((schema.items ?? {}) as Json)}[]`;
  if (schema.type === 'object' && schema.patternProperties) {
    const values = Object.values(schema.patternProperties as Record<string, Json>)[0];
    return `map of ${schemaName(values)}`;
  }
  if (typeof schema.type === 'string') return schema.type;
  return 'any';
}

function sentence(text: string): string {
  return /[.?!]$/.test(text) ? text : `${text}.`;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}
