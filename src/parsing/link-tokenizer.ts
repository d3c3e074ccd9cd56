/**
 * parse5's tokenizer without the per-character work on text that link extraction never reads. In the
 * text states (data, RCDATA, RAWTEXT, script data, PLAINTEXT) and inside comments, only a few characters
 * can change the state; every other character would merely be appended to a character or comment token,
 * one state-machine step each. Here the tokenizer jumps straight to the next character that matters, so
 * tags, attributes and state changes are still parse5's own, while text costs one `indexOf`.
 *
 * Character and comment tokens therefore come out incomplete: a handler must not read them.
 */

import { Tokenizer } from "parse5";

const LESS_THAN = 0x3c;
const HYPHEN = 0x2d;
const NUL = 0x00;
const EOF = -1;

/** A tokenizer for handlers that only read start tags (and end tags): text and comment data are skipped. */
export class LinkTokenizer extends Tokenizer {
  protected override _stateData(cp: number): void {
    // `&` is plain text here too: a character reference in text can only yield text.
    if (cp === LESS_THAN || cp === EOF) super._stateData(cp);
    else this.skipToTagOpen();
  }

  protected override _stateRcdata(cp: number): void {
    if (cp === LESS_THAN || cp === EOF) super._stateRcdata(cp);
    else this.skipToTagOpen();
  }

  protected override _stateRawtext(cp: number): void {
    if (cp === LESS_THAN || cp === EOF) super._stateRawtext(cp);
    else this.skipToTagOpen();
  }

  protected override _stateScriptData(cp: number): void {
    if (cp === LESS_THAN || cp === EOF) super._stateScriptData(cp);
    else this.skipToTagOpen();
  }

  protected override _statePlaintext(cp: number): void {
    if (cp === EOF) super._statePlaintext(cp);
    else this.preprocessor.pos = this.preprocessor.html.length - 1;
  }

  protected override _stateComment(cp: number): void {
    if (cp === LESS_THAN || cp === HYPHEN || cp === NUL || cp === EOF) {
      super._stateComment(cp);
      return;
    }
    // A comment ends only at `-`; `<` and NUL are kept for parse5 to handle as it does.
    const { html, pos } = this.preprocessor;
    let next = pos + 1;
    for (; next < html.length; next++) {
      const code = html.charCodeAt(next);
      if (code === HYPHEN || code === LESS_THAN || code === NUL) break;
    }
    this.preprocessor.pos = next - 1;
  }

  /**
   * Moves the input to just before the next `<` (or its end), dropping the characters between. The
   * preprocessor's CR/LF and surrogate bookkeeping only matters for characters that are read, and the
   * next one read is `<` or the end of the input.
   */
  private skipToTagOpen(): void {
    const preprocessor = this.preprocessor;
    const next = preprocessor.html.indexOf("<", preprocessor.pos + 1);
    preprocessor.pos = (next === -1 ? preprocessor.html.length : next) - 1;
  }
}
