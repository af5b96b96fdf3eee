// `node --import ./test/helpers/typescript5-register.mjs …`: see typescript5-hook.mjs.
import { register } from 'node:module';

register('./typescript5-hook.mjs', import.meta.url);
