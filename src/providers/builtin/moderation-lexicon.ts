/**
 * The lexicon half of the built-in moderation classifier: obscenity's English word list (which also
 * catches obfuscated spellings such as `f.u.c.k` or leet speak), with each word assigned the SPEC
 * category it is evidence for and how strong that evidence is. Plain swearing (`shit`, `bastard`) is
 * evidence for no category: it is rude, not hateful, sexual or violent.
 */
import { RegExpMatcher, englishDataset, englishRecommendedTransformers } from 'obscenity';
import type { EnglishProfaneWord } from 'obscenity';
import type { ModerationCategory } from '../../core/language-model.ts';

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

export class ModerationLexicon {
  private readonly matcher = new RegExpMatcher({ ...englishDataset.build(), ...englishRecommendedTransformers });

  /** Evidence per category in 0..1; several words combine as independent evidence (noisy-or). */
  score(text: string): Record<ModerationCategory, number> {
    const absent: Record<ModerationCategory, number> = { hate: 1, 'self-harm': 1, sexual: 1, violence: 1 };
    for (const match of this.matcher.getAllMatches(text)) {
      const word = englishDataset.getPayloadWithPhraseMetadata(match).phraseMetadata?.originalWord;
      if (word === undefined) continue;
      for (const [category, evidence] of Object.entries(WORD_EVIDENCE[word]) as Array<[ModerationCategory, number]>) {
        absent[category] *= 1 - evidence;
      }
    }
    return { hate: 1 - absent.hate, 'self-harm': 1 - absent['self-harm'], sexual: 1 - absent.sexual, violence: 1 - absent.violence };
  }
}
