import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileLoadError, ReloadableFile, type FileCompiler } from './reloadable-file';

/** A file of one word: its version is the word, `bad` is refused. */
const compile: FileCompiler<{ version: string }> = (text) =>
  text.trim() === 'bad'
    ? { ok: false, errors: [{ path: 'word', message: 'bad is refused' }] }
    : { ok: true, value: { version: text.trim() } };

class WordLoadError extends FileLoadError {}
class WordStore extends ReloadableFile<{ version: string }, { length: number }> {}

describe(ReloadableFile.name, () => {
  let dir: string;
  let path: string;
  let sut: WordStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tally-reloadable-'));
    path = join(dir, 'word.txt');
    writeFileSync(path, 'alpha');
    sut = new WordStore({
      path,
      debounceMs: 20,
      compile,
      summary: (value) => ({ length: value.version.length }),
      loadError: (file, errors) => new WordLoadError('word file', file, errors),
      subject: 'word',
      logger: new Logger('test'),
      listenerFailure: 'word listener failed',
    });
  });

  afterEach(() => {
    sut.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("names the store and its subject when read before load, and the store's own error class at load", () => {
    expect(() => sut.current).toThrow('WordStore: no word set loaded yet');

    writeFileSync(path, 'bad');
    expect(() => sut.load()).toThrow(WordLoadError);
    expect(() => sut.load()).toThrow(`invalid word file ${path}:\n  word: bad is refused`);
    const thrown = (() => {
      try {
        sut.load();
      } catch (e) {
        return e;
      }
    })();
    expect(thrown).toMatchObject({
      name: 'WordLoadError',
      path,
      errors: [{ path: 'word', message: 'bad is refused' }],
    });
  });

  it('adds the summary of the value read to a success, and keeps the running value on a refusal', async () => {
    sut.load();
    writeFileSync(path, 'gamma-ray');

    expect(await sut.reload()).toEqual({ ok: true, version: 'gamma-ray', changed: true, length: 9 });
    writeFileSync(path, 'bad');
    expect(await sut.reload()).toEqual({ ok: false, errors: [{ path: 'word', message: 'bad is refused' }] });
    expect(sut.current.version).toBe('gamma-ray');
  });
});
