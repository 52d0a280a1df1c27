// A V8 CPU profile of a span of THIS process (the replay runs in the bench process, not in a child
// that --cpu-prof could cover), written as a .cpuprofile that profile-summary.mjs and DevTools read.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/** Starts profiling now; `stop(path)` writes the profile there and ends the session. */
export async function startCpuProfile() {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  // 1 ms sampling (V8 defaults to 1 ms in --cpu-prof too): fine enough for a multi-second span.
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  return {
    async stop(path) {
      try {
        const { profile } = await session.post('Profiler.stop');
        // The first sample's delta is the profiler's own start-up (~200 ms, charged to `post`), not
        // the profiled span: it would top every self-time list.
        if (profile.timeDeltas.length > 0) {
          profile.startTime += profile.timeDeltas[0];
          profile.timeDeltas[0] = 0;
        }
        writeFileSync(path, JSON.stringify(profile));
      } finally {
        session.disconnect();
      }
    },
    /** On a failed run: drop the profile, keep the process free of a dangling session. */
    discard() {
      session.disconnect();
    },
  };
}
