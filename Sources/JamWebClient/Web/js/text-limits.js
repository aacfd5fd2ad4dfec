// Typed text checked the way the server checks it (Validate.text and Validate.displayName in
// Sources/JamProtocol/Track.swift), so the page refuses exactly what the server would, in words,
// and nothing more. Swift counts Characters (extended grapheme clusters), not the UTF-16 units
// of String.length or of an input's maxlength: 64 family emoji are 64 characters but 704 units.
// Tests/Fixtures/ClientParity/display-names.json holds the cases both sides must agree on.
import { Limits } from './protocol.js';

// Made on first use, and only where the browser has it (Firefox before 125 does not): a
// module that threw while loading would take the whole page down with it.
let graphemes;

function segmenter() {
  if (graphemes === undefined) graphemes = typeof Intl.Segmenter === 'function' ? new Intl.Segmenter(undefined, { granularity: 'grapheme' }) : null;
  return graphemes;
}

/**
 * How many characters Swift's `String.count` gives for `text`: grapheme clusters. Without
 * Intl.Segmenter, code points, which count a multi-part emoji as several (see checkText).
 */
export function characterCount(text) {
  const value = String(text ?? '');
  const counter = segmenter();
  return counter ? [...counter.segment(value)].length : [...value].length;
}

// Foundation's CharacterSet.whitespacesAndNewlines: tab, the space separators (Zs), U+000A to
// U+000D, NEL, U+2028 and U+2029. String.prototype.trim differs: it strips U+FEFF and keeps NEL.
const EDGE_WHITESPACE = /^[\t\n\v\f\r\u0085\u2028\u2029\p{Zs}]+|[\t\n\v\f\r\u0085\u2028\u2029\p{Zs}]+$/gu;

/** `text` without the leading and trailing whitespace the server trims. */
export function trimWhitespace(text) {
  return String(text ?? '').replace(EDGE_WHITESPACE, '');
}

const utf8 = new TextEncoder();

/**
 * Checks typed text as Validate.text does after trimming: empty (unless allowed), then longer
 * than `max` characters, then more than Limits.maxBytesPerCharacter bytes of UTF-8 for each
 * (accents typed apart and joined emoji count several), then holding a control character.
 * @returns {{value: string, characters: number, bytes: number,
 *   problem: null|'empty'|'tooLong'|'tooManyBytes'|'control'}}
 *   `value` is the trimmed text, the one to send; `bytes` its UTF-8 length.
 */
export function checkText(text, max, { allowEmpty = false } = {}) {
  const value = trimWhitespace(text);
  const characters = characterCount(value);
  const bytes = utf8.encode(value).length;
  let problem = null;
  if (!allowEmpty && !value) problem = 'empty';
  // Code points can only overcount characters: without a segmenter the server judges the length.
  else if (characters > max && segmenter()) problem = 'tooLong';
  else if (bytes > max * Limits.maxBytesPerCharacter) problem = 'tooManyBytes';
  else if (/\p{Cc}/u.test(value)) problem = 'control';
  return { value, characters, bytes, problem };
}

// Validate.turnsDirection: the embeddings, overrides and isolates, which reorder the text after
// them ("\u202Eecila" shows as "alice"). Right-to-left letters and the marks U+200E, U+200F pass.
const TURNS_DIRECTION = /[\u202A-\u202E\u2066-\u2069]/u;

// Validate.shows: a character that shows as something. Not white space, not one Unicode lets a
// display leave out (fillers such as U+3164, zero-width and other format characters), not the
// blank braille pattern U+2800.
const SHOWS = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}\p{Cf}\u2800]/u;

/**
 * A display name checked as Validate.displayName checks it: checkText's faults first, then a
 * character that turns the direction of text (problem 'direction'), then nothing that shows
 * (problem 'invisible').
 */
export function checkDisplayName(text) {
  const check = checkText(text, Limits.maxDisplayName);
  if (check.problem === null && TURNS_DIRECTION.test(check.value)) check.problem = 'direction';
  if (check.problem === null && !SHOWS.test(check.value)) check.problem = 'invisible';
  return check;
}

/** A session name checked as the server checks one it is given; empty means none (the default). */
export function checkSessionName(text) {
  return checkText(text, Limits.maxSessionName, { allowEmpty: true });
}

/**
 * What is wrong with checked text, in words: `check` is checkText's answer, `subject` names the
 * text ("Your name"), `max` is its limit in characters, and `empty` says what to do when it is
 * empty. Null when nothing is wrong.
 */
export function describeTextProblem({ characters, bytes, problem }, { subject, max, empty = `${subject} must not be empty.` }) {
  switch (problem) {
    case null: return null;
    case 'empty': return empty;
    case 'tooLong': return `${subject} can have at most ${max} characters; this one has ${characters}.`;
    case 'tooManyBytes':
      return `${subject} is too long to send: accents typed apart and joined emoji count several bytes, and it has ${bytes} bytes of at most ${max * Limits.maxBytesPerCharacter}.`;
    case 'control': return `${subject} cannot contain tabs or other control characters.`;
    case 'direction': return `${subject} cannot contain characters that turn the direction of text (U+202A to U+202E, U+2066 to U+2069): they can make one name look like another.`;
    case 'invisible': return `${subject} needs a character that shows: fillers and zero-width characters alone show no name.`;
    default: return `${subject} cannot be sent.`;
  }
}
