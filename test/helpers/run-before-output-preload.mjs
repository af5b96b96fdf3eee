// Loaded into a CLI child with NODE_OPTIONS=--import=<this file> and
// ESTATE_TEST_RUN_BEFORE_OUTPUT=<JSON array: a command and its arguments>:
// the first time the child writes to stdout, it first runs that command to
// its end, blocking (spawnSync, without these two variables). So the command
// happens after the child read its answer and before whatever the child does
// once that answer is printed: `work feed --follow` recording a completion
// between the feed and the follow.
import { spawnSync } from 'node:child_process';

const command = process.env.ESTATE_TEST_RUN_BEFORE_OUTPUT;
if (command) {
  const [file, ...args] = JSON.parse(command);
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  delete env.ESTATE_TEST_RUN_BEFORE_OUTPUT;
  const write = process.stdout.write.bind(process.stdout);
  let ran = false;
  process.stdout.write = (...writeArgs) => {
    if (!ran) {
      ran = true;
      const r = spawnSync(file, args, { env, encoding: 'utf8' });
      if (r.status !== 0) process.stderr.write(`run-before-output: ${file} exited ${r.status}: ${r.stderr}\n`);
    }
    return write(...writeArgs);
  };
}
