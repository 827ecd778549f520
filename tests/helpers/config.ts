import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../server/src/config.ts';

/** The ConfigError loadConfig throws for `env`; a configuration it accepts fails the test. */
export function refusal(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    assert.instance(error, ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}
