// The steps a host is offered for the settings that are shares or durations rather than
// counts, with their words: JamClient's SettingsChoices (the terminal client's), held to
// the same values by Tests/Fixtures/ClientParity/settings.json.
import { SettingsLimits } from './protocol.js';

/** Skip thresholds: a song is skipped when more than this share of the members who may ask have asked. */
export const SKIP_THRESHOLDS = Object.freeze([
  { value: 0.25, words: 'a quarter' }, { value: 1 / 3, words: 'a third' }, { value: 0.5, words: 'half' },
  { value: 2 / 3, words: 'two thirds' }, { value: 0.99, words: 'nearly everybody' },
]);

/** Add cooldowns in seconds; the last is SettingsLimits.cooldownLimit. */
export const ADD_COOLDOWNS = Object.freeze([
  { value: 0, words: 'whenever they like' }, { value: 60, words: 'one a minute' },
  { value: 120, words: 'one every 2 minutes' }, { value: 300, words: 'one every 5 minutes' },
  { value: 600, words: 'one every 10 minutes' }, { value: 900, words: 'one every 15 minutes' },
  { value: 1800, words: 'one every 30 minutes' }, { value: SettingsLimits.cooldownLimit, words: 'one an hour' },
]);

/**
 * The index of the choice whose value is closest to `value`, the first of two as close, so
 * a setting made elsewhere (another client, the API) still shows as a step.
 * @param {ReadonlyArray<{value: number}>} choices @param {number} value
 */
export function closestChoice(choices, value) {
  let best = 0;
  for (let index = 1; index < choices.length; index += 1) {
    if (Math.abs(choices[index].value - value) < Math.abs(choices[best].value - value)) best = index;
  }
  return best;
}
