// A number typed into a field, read by a rule that may refuse it: a refusal is shown on the
// field (the browser's own message, read out by screen readers) and nothing is sent; the
// next edit clears it.

/**
 * Reads `input`'s text with `read` (returning `{error}` or a value) and hands a value to `send`.
 * @param {HTMLInputElement} input
 * @param {(text: string) => ({error: string} | object)} read
 * @param {(value: object) => void} send
 */
export function typedNumber(input, read, send) {
  // The browser's own check first: text a number field cannot hold reads as ''.
  const text = input.validity.badInput ? 'not a number' : input.value;
  const value = read(text);
  if (value.error) {
    input.setCustomValidity(value.error);
    input.setAttribute('aria-invalid', 'true');
    input.reportValidity();
    if (!input.dataset.clearsValidity) {
      input.dataset.clearsValidity = 'yes';
      input.addEventListener('input', () => {
        input.setCustomValidity('');
        input.removeAttribute('aria-invalid');
      });
    }
    return;
  }
  input.setCustomValidity('');
  input.removeAttribute('aria-invalid');
  send(value);
}
