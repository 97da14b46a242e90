/**
 * A shortcut for the events most of an Anthropic stream is made of: every `content_block_delta` of a
 * block is the same JSON text with only the delta string changed,
 *
 *   {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"<text>"}}
 *
 * A DeltaTemplate learns the text around that string from one delta that was parsed in full
 * (shared/string-slot.ts, proved by a probe through `readEvent`) and reads a later event that matches
 * it without parsing: its view is the learnt view with the new string. Text, thinking and tool input
 * (`partial_json`) deltas are learnt; every other event is parsed in full, as is a delta of another
 * block until the template has learnt that block (each block's first delta is parsed).
 */
import { StringSlot } from '../shared/string-slot.ts';
import { readEvent, type AnthropicDeltaView, type AnthropicEventView } from './anthropic-wire.ts';

/** The delta fields a template can carry, with their key in the wire text. */
const FIELDS = { text: 'text', thinking: 'thinking', partialJson: 'partial_json' } as const;
export type Field = keyof typeof FIELDS;

/** Stops learning after this many probes in one stream (a proxy that changes every event). */
const MAX_PROBES = 8;

export class DeltaTemplate {
  private slot: StringSlot | undefined;
  private index = 0;
  private deltaType = '';
  private field: Field = 'text';
  private probes = 0;

  /** The block index of every event that matches. */
  get blockIndex(): number {
    return this.index;
  }

  /** The delta `type` of every event that matches (`text_delta`, `thinking_delta`, `input_json_delta`). */
  get deltaKind(): string {
    return this.deltaType;
  }

  /** Which field of the delta the matched string is. */
  get valueField(): Field {
    return this.field;
  }

  /**
   * The delta string of an event that matches the template (its view is `read`'s: a
   * `content_block_delta` of `blockIndex`, of `deltaKind`, with this string in `valueField` and nothing
   * else), or undefined (then parse it in full). The provider's hot path: no view object is built
   * (AnthropicStreamMapper.mapDeltaValue).
   */
  readValue(data: string): string | undefined {
    return this.slot?.match(data);
  }

  /** The view of an event that matches the template, or undefined (then parse it in full). */
  read(data: string): AnthropicEventView | undefined {
    const value = this.readValue(data);
    if (value === undefined) return undefined;
    const field = this.field;
    const delta: AnthropicDeltaView = {
      type: this.deltaType,
      text: field === 'text' ? value : undefined,
      partialJson: field === 'partialJson' ? value : undefined,
      thinking: field === 'thinking' ? value : undefined,
      signature: undefined,
    };
    return { type: 'content_block_delta', index: this.index, delta };
  }

  /** Learns from an event that was parsed in full (`view` is its view), when it is a text, thinking or tool input delta. */
  learn(data: string, view: AnthropicEventView): void {
    if (this.probes >= MAX_PROBES || view.type !== 'content_block_delta') return;
    const field = onlyField(view.delta);
    if (field === undefined) return;
    this.probes++;
    const { index, delta } = view;
    // The probe must read as the same kind of delta, of the same block, with the sentinel as its only string.
    const slot = StringSlot.find(data, FIELDS[field], (probe, sentinel) => {
      const probed = readEvent(probe);
      return (
        probed.type === 'content_block_delta' &&
        probed.index === index &&
        probed.delta.type === delta.type &&
        onlyField(probed.delta) === field &&
        probed.delta[field] === sentinel
      );
    });
    if (slot === undefined) return;
    this.slot = slot;
    this.index = index;
    this.deltaType = delta.type;
    this.field = field;
  }
}

/** The one non-empty string field of a delta, when it has exactly one of text, thinking, partial_json and no signature. */
function onlyField(delta: AnthropicDeltaView): Field | undefined {
  if (delta.signature !== undefined) return undefined;
  let found: Field | undefined;
  for (const field of ['text', 'thinking', 'partialJson'] as const) {
    if (delta[field] === undefined) continue;
    if (found !== undefined || delta[field] === '') return undefined;
    found = field;
  }
  return found;
}
