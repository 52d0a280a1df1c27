// The relay's own counts, read from its Prometheus `/metrics` around a measurement: records Kafka
// confirmed (`tally_relay_events_published_total`, summed over topics) and produce requests sent
// (`tally_relay_produce_requests_total`); a relay that exports no such counter gives null, printed
// "n/a", rather than a guess.

const COUNTERS = {
  published: 'tally_relay_events_published_total',
  produceRequests: 'tally_relay_produce_requests_total',
};

/**
 * Sum of every sample of `name` (all label sets): 0 when the family is declared but has no sample
 * yet (a labelled counter before its first increment), null when the text does not know it.
 */
export function counterSum(text, name) {
  let sum = text.includes(`# TYPE ${name} `) ? 0 : null;
  const sample = new RegExp(`^${name}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'gm');
  for (const m of text.matchAll(sample)) sum = (sum ?? 0) + Number(m[1]);
  return sum;
}

/** `{ published, produceRequests }` now; both null when `url` is null (no relay). */
export async function relayCounts(url, headers = {}) {
  if (url === null) return { published: null, produceRequests: null };
  const response = await fetch(url, { headers });
  if (!response.ok) throw new Error(`relay ${url} answered ${response.status}`);
  const text = await response.text();
  return Object.fromEntries(Object.entries(COUNTERS).map(([key, name]) => [key, counterSum(text, name)]));
}

/** What happened between two readings: records published, produce requests, records per request. */
export function relayDelta(before, after) {
  const diff = (key) => (after[key] === null || before[key] === null ? null : after[key] - before[key]);
  const published = diff('published');
  const produceRequests = diff('produceRequests');
  return {
    published,
    produceRequests,
    recordsPerRequest:
      published === null || !produceRequests ? null : Math.round((published / produceRequests) * 10) / 10,
  };
}
