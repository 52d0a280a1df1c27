import { getMetadataStorage } from 'class-validator';
import { envBindings, type EnvBinding, type EnvKind } from './env.decorator';
import { TallyConfig } from './tally.config';

/**
 * The settings table of docs/configuration.md, generated from the typed config: each setting's
 * variable, type and range (its `@Env` kind and its validators), default (its `@Env` default, else
 * whether a validator requires it) and the one-line comment it carries in tally.config.ts. The
 * comment is read from the source text given (TSDoc does not exist at run time).
 * config-reference.spec.ts holds the page to it; `npm run docs:config` rewrites the page.
 */
export function renderConfigReference(configSource: string): string {
  const comments = tsDocByVariable(configSource);
  const validators = getMetadataStorage().getTargetValidationMetadatas(TallyConfig, '', true, false);
  const rows = envBindings(TallyConfig).map((binding) => {
    const own = validators.filter((v) => v.propertyName === binding.property);
    const comment = comments.get(binding.variable);
    if (comment === undefined) throw new Error(`${binding.variable} has no TSDoc comment in tally.config.ts`);
    return `| \`${binding.variable}\` | ${typeOf(binding, own)} | ${defaultOf(binding, own)} | ${cell(comment)} |`;
  });
  return ['| setting | type | default | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** The TSDoc comment right above each `@Env('VARIABLE', …)`, joined into one line. */
function tsDocByVariable(source: string): Map<string, string> {
  const comments = new Map<string, string>();
  for (const match of source.matchAll(/\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*@Env\('([A-Z0-9_]+)'/g)) {
    const text = match[1]
      .split('\n')
      .map((line) => line.replace(/^\s*\*?\s?/, '').trim())
      .filter((line) => line !== '')
      .join(' ');
    comments.set(match[2], text);
  }
  return comments;
}

type ValidationMetadata = ReturnType<
  ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']
>[number];

const KIND: Record<EnvKind, string> = {
  string: 'string',
  int: 'integer',
  'int-or-auto': 'integer or `auto`',
  list: 'comma-separated list',
  duration: 'duration',
  decimal: 'number',
};

function constraint(validators: readonly ValidationMetadata[], name: string): unknown {
  return validators.find((v) => v.name === name)?.constraints?.[0];
}

function typeOf(binding: EnvBinding, validators: readonly ValidationMetadata[]): string {
  const values = constraint(validators, 'isIn') as readonly string[] | undefined;
  let type = values === undefined ? KIND[binding.kind] : `one of ${values.map((v) => `\`${v}\``).join(', ')}`;
  const min = constraint(validators, 'min') as number | undefined;
  const max = constraint(validators, 'max') as number | undefined;
  if (min !== undefined && max !== undefined) {
    const range =
      binding.kind === 'duration' ? `${durationText(min)}..${durationText(max)}` : `${min}..${max}`;
    type = binding.kind === 'int-or-auto' ? `\`auto\` or ${range}` : `${type}, ${range}`;
  }
  return binding.secret ? `${type} (secret)` : type;
}

function defaultOf(binding: EnvBinding, validators: readonly ValidationMetadata[]): string {
  if (binding.default !== undefined) return `\`${binding.default}\``;
  const required = validators.find((v) => v.name === 'isDefined');
  if (required === undefined) return 'unset';
  // The validator's own message says when it is required ("required unless …"), without its detail.
  const message = typeof required.message === 'string' ? required.message : 'required';
  return cell(message.replace(/\s*\(.*\)$/, ''));
}

const UNITS: [string, number][] = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
];

/** Milliseconds in the largest unit that holds them exactly, as the variables are written. */
function durationText(ms: number): string {
  const unit = UNITS.find(([, size]) => ms >= size && ms % size === 0);
  return unit === undefined ? `${ms}ms` : `${ms / unit[1]}${unit[0]}`;
}

/** Text safe in a Markdown table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}
