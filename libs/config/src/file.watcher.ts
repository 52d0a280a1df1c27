import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';

export interface FileWatch {
  close(): void;
}

/**
 * Calls `onChange` once things settle after the file at `path` changes. The directory is watched, not
 * the file: editors and deploy tools replace files (write a temp file, rename over the original), which
 * ends a watch on the old inode. Names starting with `..` are Kubernetes ConfigMap mounts swapping their
 * `..data` symlink. Spurious calls are harmless: an unchanged file reloads as `changed: false`.
 */
export function watchFile(
  path: string,
  debounceMs: number,
  onChange: () => void,
  onError: (error: Error) => void,
): FileWatch {
  const target = basename(path);
  let timer: NodeJS.Timeout | undefined;
  // Not persistent: watching must never be what keeps a process from exiting.
  const watcher: FSWatcher = watch(dirname(resolve(path)), { persistent: false }, (_event, name) => {
    if (name !== null && name !== target && !name.startsWith('..')) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, debounceMs);
    timer.unref();
  });
  watcher.on('error', onError);
  return {
    close: () => {
      clearTimeout(timer);
      watcher.close();
    },
  };
}
