/**
 * The lexicon half of the built-in moderation classifier: obscenity's English word list (which also
 * catches obfuscated spellings such as `f.u.c.k` or leet speak), with each word assigned the SPEC
 * category it is evidence for and how strong that evidence is. Plain swearing (`shit`, `bastard`) is
 * evidence for no category: it is rude, not hateful, sexual or violent.
 */
import { RegExpMatcher, englishDataset, englishRecommendedTransformers } from 'obscenity';
import type { EnglishProfaneWord } from 'obscenity';
import type { EventLoopSlicer } from '../../../core/event-loop-slices.ts';
import type { ModerationCategory } from '../../../core/language-model.ts';

/** Evidence per category, 0..1: the probability that a text with this word belongs to the category. */
type WordEvidence = Partial<Record<ModerationCategory, number>>;

/** Slurs against protected groups: strong evidence of hate on their own. */
const SLUR = { hate: 0.9 } as const;
/** Words that name sexual acts or pornography: strong evidence of sexual content. */
const EXPLICIT = { sexual: 0.8 } as const;
/** Anatomy and crude sexual words, also common as insults or in medical text: weaker evidence. */
const CRUDE = { sexual: 0.45 } as const;

// Exhaustive over obscenity's word list, so that a new word in a newer obscenity version is a type error.
const WORD_EVIDENCE: Record<EnglishProfaneWord, WordEvidence> = {
  abeed: SLUR,
  abo: SLUR,
  africoon: SLUR,
  arabush: SLUR,
  boonga: SLUR,
  chingchong: SLUR,
  chink: SLUR,
  dyke: SLUR,
  fag: SLUR,
  kike: SLUR,
  // Also in historical names ("Negro Leagues"), hence weaker than the other slurs.
  negro: { hate: 0.6 },
  nigger: SLUR,
  retard: { hate: 0.7 },
  spastic: { hate: 0.6 },
  tranny: SLUR,
  anal: EXPLICIT,
  bestiality: EXPLICIT,
  blowjob: EXPLICIT,
  buttplug: EXPLICIT,
  cum: EXPLICIT,
  deepthroat: EXPLICIT,
  dildo: EXPLICIT,
  doggystyle: EXPLICIT,
  'double penetration': EXPLICIT,
  ejaculate: EXPLICIT,
  felch: EXPLICIT,
  fellatio: EXPLICIT,
  'finger bang': EXPLICIT,
  fisting: EXPLICIT,
  gangbang: EXPLICIT,
  handjob: EXPLICIT,
  hentai: EXPLICIT,
  incest: EXPLICIT,
  'jerk off': EXPLICIT,
  jizz: EXPLICIT,
  lubejob: EXPLICIT,
  masturbate: EXPLICIT,
  orgasm: EXPLICIT,
  orgy: EXPLICIT,
  porn: EXPLICIT,
  semen: CRUDE,
  // "sex education", "the sex of the kitten": common and benign, so weak evidence only.
  sex: { sexual: 0.3 },
  boob: CRUDE,
  cock: CRUDE,
  dick: CRUDE,
  penis: CRUDE,
  pussy: CRUDE,
  tit: CRUDE,
  vagina: { sexual: 0.3 },
  anus: { sexual: 0.3 },
  hooker: CRUDE,
  slut: CRUDE,
  whore: CRUDE,
  cunt: CRUDE,
  fuck: { sexual: 0.35 },
  rape: { violence: 0.8, sexual: 0.6 },
  arse: {},
  ass: {},
  bastard: {},
  bitch: {},
  bollocks: {},
  cuck: {},
  piss: {},
  prick: {},
  scat: {},
  shit: {},
  turd: {},
  twat: {},
  wank: { sexual: 0.3 },
};

/** Characters matched per step of `scoreInSlices` (~1 µs a character here: about 2 ms a step). */
const LEXICON_PIECE_CHARACTERS = 2048;
/** How far a step reads past its piece, so that a word across the cut is still matched (by the step it starts in). */
const LEXICON_OVERLAP_CHARACTERS = 256;

function isWhitespace(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9 || code === 12 || code === 11;
}

/** Where a piece from `start` ends: before a whitespace when there is one near the limit, so the next piece starts at a word boundary. */
function pieceEnd(text: string, start: number): number {
  const limit = start + LEXICON_PIECE_CHARACTERS;
  if (limit >= text.length) return text.length;
  for (let index = limit; index > limit - LEXICON_OVERLAP_CHARACTERS; index--) if (isWhitespace(text.charCodeAt(index))) return index;
  return limit;
}

type Absence = Record<ModerationCategory, number>;

export class ModerationLexicon {
  private readonly matcher = new RegExpMatcher({ ...englishDataset.build(), ...englishRecommendedTransformers });

  /** Evidence per category in 0..1; several words combine as independent evidence (noisy-or). */
  score(text: string): Record<ModerationCategory, number> {
    const absent: Absence = { hate: 1, 'self-harm': 1, sexual: 1, violence: 1 };
    this.addMatches(text, 0, Number.POSITIVE_INFINITY, absent);
    return evidence(absent);
  }

  /**
   * `score` for a long text without holding the event loop: the text is matched in pieces of about
   * LEXICON_PIECE_CHARACTERS (each read with an overlap, a match counted by the piece it starts in),
   * yielding whenever `slicer` says the slice is used up. The same evidence as `score` but for a word
   * broken across a cut inside a long run without whitespace.
   */
  async scoreInSlices(text: string, slicer: EventLoopSlicer): Promise<Record<ModerationCategory, number>> {
    if (text.length <= LEXICON_PIECE_CHARACTERS) return this.score(text);
    const absent: Absence = { hate: 1, 'self-harm': 1, sexual: 1, violence: 1 };
    for (let start = 0; start < text.length;) {
      const end = pieceEnd(text, start);
      const windowEnd = Math.min(text.length, end + LEXICON_OVERLAP_CHARACTERS);
      this.addMatches(text.slice(start, windowEnd), start, end, absent);
      start = end;
      await slicer.checkpoint();
    }
    return evidence(absent);
  }

  /** Multiplies in the evidence of the matches in `piece` (which starts at `offset`) that start before `countBefore`. */
  private addMatches(piece: string, offset: number, countBefore: number, absent: Absence): void {
    for (const match of this.matcher.getAllMatches(piece)) {
      if (offset + match.startIndex >= countBefore) continue; // the next piece counts it
      const word = englishDataset.getPayloadWithPhraseMetadata(match).phraseMetadata?.originalWord;
      if (word === undefined) continue;
      for (const [category, weight] of Object.entries(WORD_EVIDENCE[word]) as Array<[ModerationCategory, number]>) {
        absent[category] *= 1 - weight;
      }
    }
  }
}

function evidence(absent: Absence): Record<ModerationCategory, number> {
  return { hate: 1 - absent.hate, 'self-harm': 1 - absent['self-harm'], sexual: 1 - absent.sexual, violence: 1 - absent.violence };
}
