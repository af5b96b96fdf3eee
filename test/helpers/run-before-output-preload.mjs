// Loaded into a CLI child with NODE_OPTIONS=--import=<this file> and
// ESTATE_TEST_RUN_BEFORE_OUTPUT=<JSON array: a command and its arguments>:
// the first time the child writes to stdout, it first runs that command to
// its end, blocking (spawnSync, without these two variables). So the command
// happens after the child read its answer and before whatever the child does
// once that answer is printed: `work feed --follow` recording a completion
// between the feed and the follow. The CLI writes a pipe with fs.writeSync
// and a terminal through process.stdout: both are watched.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const command = process.env.ESTATE_TEST_RUN_BEFORE_OUTPUT;
if (command) {
  const [file, ...args] = JSON.parse(command);
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  delete env.ESTATE_TEST_RUN_BEFORE_OUTPUT;
  let ran = false;
  const runOnce = () => {
    if (ran) return;
    ran = true;
    const r = spawnSync(file, args, { env, encoding: 'utf8' });
    if (r.status !== 0) process.stderr.write(`run-before-output: ${file} exited ${r.status}: ${r.stderr}\n`);
  };
  const writeSync = fs.writeSync;
  fs.writeSync = (fd, ...rest) => {
    if (fd === 1) runOnce();
    return writeSync(fd, ...rest);
  };
  // Wrapped when first asked for: reading process.stdout here would build the stream the CLI leaves unbuilt.
  const stdout = Object.getOwnPropertyDescriptor(process, 'stdout');
  let wrapped = false;
  Object.defineProperty(process, 'stdout', {
    ...stdout,
    get() {
      const stream = stdout.get.call(process);
      if (!wrapped) {
        wrapped = true;
        const write = stream.write.bind(stream);
        stream.write = (...writeArgs) => {
          runOnce();
          return write(...writeArgs);
        };
      }
      return stream;
    },
  });
}
