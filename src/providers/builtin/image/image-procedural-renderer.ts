/**
 * The built-in image engine's renderer: a deterministic procedural picture seeded by the prompt. It is
 * NOT a generative model: the prompt is hashed (SHA-256) into a seed that picks a palette, a scene
 * (a landscape of layered ridges under a sun or moon, a seascape, or an abstract composition of discs,
 * rings and bands) and every shape's position. A few words steer the palette (night, sunset, ocean,
 * forest, snow, desert...). Same prompt, size and variant: same pixels, on every machine.
 *
 * Shapes live in unit coordinates, so one prompt looks the same at 256x256 and 1024x1024. Pure CPU
 * work (about 1 s for ten 1024x1024 images): the image model runs it in a worker thread.
 */
import { createHash } from 'node:crypto';

type Colour = [number, number, number];

/** sfc32: a small, fast, well-distributed 32-bit PRNG; seeded from the prompt hash. */
function createRandom(seed: Buffer): () => number {
  let a = seed.readUInt32LE(0);
  let b = seed.readUInt32LE(4);
  let c = seed.readUInt32LE(8);
  let d = seed.readUInt32LE(12);
  const next = (): number => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // Discard the first outputs, which are weakly mixed for similar seeds.
  for (let index = 0; index < 12; index++) next();
  return next;
}

/** HSL (hue in turns 0..1, saturation and lightness 0..1) to RGB 0..255. */
function hsl(hue: number, saturation: number, lightness: number): Colour {
  const h = ((hue % 1) + 1) % 1;
  const chroma = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const sector = h * 6;
  const x = chroma * (1 - Math.abs((sector % 2) - 1));
  const [r, g, b] =
    sector < 1
      ? [chroma, x, 0]
      : sector < 2
        ? [x, chroma, 0]
        : sector < 3
          ? [0, chroma, x]
          : sector < 4
            ? [0, x, chroma]
            : sector < 5
              ? [x, 0, chroma]
              : [chroma, 0, x];
  const m = lightness - chroma / 2;
  return [(r + m) * 255, (g + m) * 255, (b + m) * 255];
}

function mix(from: Colour, to: Colour, amount: number): Colour {
  return [from[0] + (to[0] - from[0]) * amount, from[1] + (to[1] - from[1]) * amount, from[2] + (to[2] - from[2]) * amount];
}

function smoothstep(edge0: number, edge1: number, value: number): number {
  const t = Math.min(1, Math.max(0, (value - edge0) / (edge1 - edge0)));
  return t * t * (3 - 2 * t);
}

/** Palette moods picked by words of the prompt; otherwise the hue comes from the hash. */
interface Mood {
  words: RegExp;
  /** Base hue, turns. */
  hue: number;
  /** Hue spread between palette colours, turns. */
  spread: number;
  saturation: number;
  /** Sky lightness from top to horizon. */
  lightness: [number, number];
  night?: boolean;
  scene?: Scene;
}

type Scene = 'landscape' | 'seascape' | 'abstract';

const MOODS: Mood[] = [
  {
    words: /\b(night|space|stars?|galaxy|moon|midnight|cosmic)\b/,
    hue: 0.68,
    spread: 0.08,
    saturation: 0.55,
    lightness: [0.06, 0.3],
    night: true,
  },
  { words: /\b(sunset|sunrise|dusk|dawn|fire|autumn|warm)\b/, hue: 0.02, spread: 0.09, saturation: 0.8, lightness: [0.45, 0.65] },
  {
    words: /\b(ocean|sea|beach|lake|river|waves?|water|coast)\b/,
    hue: 0.55,
    spread: 0.06,
    saturation: 0.65,
    lightness: [0.55, 0.8],
    scene: 'seascape',
  },
  { words: /\b(snow|winter|ice|frozen|arctic)\b/, hue: 0.58, spread: 0.03, saturation: 0.3, lightness: [0.7, 0.92], scene: 'landscape' },
  {
    words: /\b(forest|trees?|jungle|garden|grass|leaf|leaves|green|meadow)\b/,
    hue: 0.3,
    spread: 0.07,
    saturation: 0.5,
    lightness: [0.55, 0.8],
    scene: 'landscape',
  },
  { words: /\b(desert|sand|dunes?|canyon)\b/, hue: 0.08, spread: 0.04, saturation: 0.55, lightness: [0.6, 0.8], scene: 'landscape' },
  { words: /\b(mountains?|landscape|valley|hills?)\b/, hue: -1, spread: 0.08, saturation: 0.5, lightness: [0.5, 0.8], scene: 'landscape' },
  {
    words: /\b(abstract|pattern|geometric|shapes?|circles?)\b/,
    hue: -1,
    spread: 0.3,
    saturation: 0.6,
    lightness: [0.5, 0.7],
    scene: 'abstract',
  },
];

/** Everything the pixel loop needs, derived from the seed. */
interface Plan {
  scene: Scene;
  night: boolean;
  skyTop: Colour;
  skyBottom: Colour;
  sun: { x: number; y: number; radius: number; colour: Colour; glow: number };
  /** Ridge layers back to front: heights per unit x from sums of sines. */
  ridges: Array<{ base: number; waves: Array<{ amplitude: number; frequency: number; phase: number }>; top: Colour; bottom: Colour }>;
  horizon: number;
  water: Colour;
  discs: Array<{ x: number; y: number; radius: number; colour: Colour; opacity: number; ring: boolean }>;
  bands: Array<{ centre: number; amplitude: number; frequency: number; phase: number; thickness: number; colour: Colour; opacity: number }>;
  gradientAngle: number;
  starSeed: number;
}

function plan(prompt: string, variant: number): Plan {
  const seed = createHash('sha256').update(`${variant}\u0000${prompt}`).digest();
  const random = createRandom(seed);
  const lower = prompt.toLowerCase();
  const matched = MOODS.filter((mood) => mood.words.test(lower));
  const colourMood = matched.find((mood) => mood.hue >= 0);
  const sceneMood = matched.find((mood) => mood.scene !== undefined);
  const hue = colourMood !== undefined ? colourMood.hue + (random() - 0.5) * 0.04 : random();
  const spread = colourMood?.spread ?? 0.05 + random() * 0.25;
  const saturation = colourMood?.saturation ?? 0.45 + random() * 0.35;
  const [lightTop, lightBottom] = colourMood?.lightness ?? [0.35 + random() * 0.2, 0.65 + random() * 0.2];
  const night = matched.some((mood) => mood.night === true);
  const scenes: Scene[] = ['landscape', 'seascape', 'abstract'];
  const scene = sceneMood?.scene ?? scenes[Math.floor(random() * scenes.length)]!;

  const ridges: Plan['ridges'] = [];
  const layers = 3;
  for (let layer = 0; layer < layers; layer++) {
    const depth = layer / (layers - 1); // 0 = far, 1 = near
    const waves = Array.from({ length: 4 }, (_, index) => ({
      // Broad swells plus ever smaller detail: amplitude falls faster than frequency rises.
      amplitude: (0.07 / (index + 1) ** 1.6) * (0.6 + random()),
      frequency: (1 + index * 2.3) * (0.7 + random() * 0.8),
      phase: random() * Math.PI * 2,
    }));
    const ridgeHue = hue + spread * (1.5 + depth);
    ridges.push({
      base: 0.5 + depth * 0.17 + random() * 0.05,
      waves,
      top: hsl(ridgeHue, saturation * (0.5 + depth * 0.3), night ? 0.12 - depth * 0.05 : lightBottom - 0.2 - depth * 0.22),
      bottom: hsl(ridgeHue, saturation * 0.6, night ? 0.05 : Math.max(0.08, lightBottom - 0.35 - depth * 0.25)),
    });
  }

  const discs: Plan['discs'] = Array.from({ length: 5 + Math.floor(random() * 5) }, () => ({
    x: random(),
    y: random(),
    radius: 0.05 + random() * 0.22,
    colour: hsl(hue + spread * (random() * 4 - 2), Math.min(1, saturation + 0.15), 0.35 + random() * 0.45),
    opacity: 0.35 + random() * 0.5,
    ring: random() < 0.3,
  }));
  const bands: Plan['bands'] = Array.from({ length: 2 + Math.floor(random() * 3) }, () => ({
    centre: 0.15 + random() * 0.7,
    amplitude: 0.03 + random() * 0.12,
    frequency: 0.5 + random() * 2.5,
    phase: random() * Math.PI * 2,
    thickness: 0.02 + random() * 0.07,
    colour: hsl(hue + spread * (random() * 3 - 1.5), saturation, 0.3 + random() * 0.5),
    opacity: 0.3 + random() * 0.4,
  }));

  return {
    scene,
    night,
    skyTop: hsl(hue + spread, saturation, lightTop),
    skyBottom: hsl(hue - spread, saturation * 0.9, lightBottom),
    sun: {
      x: 0.2 + random() * 0.6,
      y: 0.15 + random() * 0.3,
      radius: 0.05 + random() * 0.06,
      colour: night ? [235, 235, 220] : hsl(0.1 + random() * 0.06, 0.95, 0.8),
      glow: night ? 0.25 : 0.55,
    },
    ridges,
    horizon: 0.58 + random() * 0.12,
    water: hsl(hue + spread * 0.5, saturation, night ? 0.12 : lightTop * 0.8),
    discs,
    bands,
    gradientAngle: random() * Math.PI * 2,
    starSeed: seed.readUInt32LE(16),
  };
}

/** Integer hash (for star placement): deterministic per cell. */
function hashCell(x: number, y: number, seed: number): number {
  let h = (Math.imul(x, 374761393) + Math.imul(y, 668265263) + seed) | 0;
  h = Math.imul(h ^ (h >>> 13), 1274126177);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296;
}

/**
 * Renders variant `variant` (0-based) of `prompt` at `width` x `height` pixels. Returns RGB bytes,
 * rows top to bottom (what `encodePngRgb` takes).
 */
export function renderProceduralImage(prompt: string, width: number, height: number, variant = 0): Uint8Array {
  const scene = plan(prompt, variant);
  const pixels = new Uint8Array(width * height * 3);
  const shortSide = Math.min(width, height);
  // Unit coordinates are stretched to the image; distances are measured in short-side units so that
  // discs stay round on non-square images.
  const scaleX = width / shortSide;
  const scaleY = height / shortSide;
  const pixel = 1 / shortSide;

  const ridgeHeights = scene.ridges.map((ridge) => ridgeHeightsOf(ridge, width));
  const frame: AbstractFrame = { cosAngle: Math.cos(scene.gradientAngle), sinAngle: Math.sin(scene.gradientAngle), scaleX, scaleY, pixel };
  const starCells = 60;

  let offset = 0;
  for (let y = 0; y < height; y++) {
    const v = (y + 0.5) / height;
    for (let x = 0; x < width; x++) {
      const u = (x + 0.5) / width;
      let colour: Colour;
      if (scene.scene === 'abstract') {
        colour = abstractPixel(scene, u, v, frame);
      } else {
        colour = mix(scene.skyTop, scene.skyBottom, Math.pow(v, 0.8));
        if (scene.night) {
          const cellX = Math.floor(u * starCells * scaleX);
          const cellY = Math.floor(v * starCells * scaleY);
          if (hashCell(cellX, cellY, scene.starSeed) < 0.15) {
            const starX = (cellX + hashCell(cellX, cellY, scene.starSeed + 1)) / (starCells * scaleX);
            const starY = (cellY + hashCell(cellX, cellY, scene.starSeed + 2)) / (starCells * scaleY);
            const dx = (u - starX) * scaleX;
            const dy = (v - starY) * scaleY;
            const brightness = 1 - smoothstep(pixel * 0.5, pixel * 1.2 + 0.0008, Math.sqrt(dx * dx + dy * dy));
            if (brightness > 0) colour = mix(colour, [255, 255, 240], brightness * (1 - v));
          }
        }
        const dx = (u - scene.sun.x) * scaleX;
        const dy = (v - scene.sun.y) * scaleY;
        const sunDistance = Math.sqrt(dx * dx + dy * dy);
        const glow = Math.exp(-((sunDistance / (scene.sun.radius * 3)) ** 2)) * scene.sun.glow;
        colour = mix(colour, scene.sun.colour, glow);
        colour = mix(colour, scene.sun.colour, 1 - smoothstep(scene.sun.radius - pixel, scene.sun.radius + pixel, sunDistance));

        if (scene.scene === 'seascape' && v > scene.horizon) {
          const depth = (v - scene.horizon) / (1 - scene.horizon);
          let water = mix(scene.water, mix(scene.water, [0, 0, 0], 0.5), depth);
          // The sun's reflection: a column of light broken by waves, wider towards the viewer.
          const ripple = Math.sin(v * 220 + Math.sin(u * 40 + v * 30) * 2);
          const spreadX = ((u - scene.sun.x) * scaleX) / (scene.sun.radius * (1 + depth * 2));
          const column = Math.exp(-(spreadX * spreadX));
          water = mix(water, scene.sun.colour, Math.max(0, ripple) * column * 0.7);
          water = mix(water, [255, 255, 255], Math.max(0, ripple - 0.85) * 0.6 * (1 - depth));
          colour = water;
        } else if (scene.scene === 'landscape') {
          for (let layer = 0; layer < scene.ridges.length; layer++) {
            const top = ridgeHeights[layer]![x]!;
            const cover = smoothstep(top - pixel, top + pixel, v);
            if (cover > 0) {
              const ridge = scene.ridges[layer]!;
              // Shaded by height above the layer's base line, not the local crest, so that no column streaks appear.
              colour = mix(colour, mix(ridge.top, ridge.bottom, Math.min(1, Math.max(0, (v - ridge.base + 0.12) / 0.45))), cover);
            }
          }
        }
      }
      // Vignette: darken the corners a little.
      const cornerX = u - 0.5;
      const cornerY = v - 0.5;
      const shade = 1 - 0.35 * (cornerX * cornerX + cornerY * cornerY);
      pixels[offset++] = Math.max(0, Math.min(255, Math.round(colour[0] * shade)));
      pixels[offset++] = Math.max(0, Math.min(255, Math.round(colour[1] * shade)));
      pixels[offset++] = Math.max(0, Math.min(255, Math.round(colour[2] * shade)));
    }
  }
  return pixels;
}

/** Ridge heights depend on x only: computed once per column and layer. */
function ridgeHeightsOf(ridge: Plan['ridges'][number], width: number): Float32Array {
  const heights = new Float32Array(width);
  for (let x = 0; x < width; x++) {
    const u = (x + 0.5) / width;
    let y = ridge.base;
    for (const wave of ridge.waves) y -= wave.amplitude * Math.sin(2 * Math.PI * wave.frequency * u + wave.phase);
    heights[x] = y;
  }
  return heights;
}

/** What an abstract pixel needs of the image: the gradient's direction and the short-side scale. */
interface AbstractFrame {
  cosAngle: number;
  sinAngle: number;
  scaleX: number;
  scaleY: number;
  pixel: number;
}

/** An abstract scene's pixel at unit coordinates (u, v): a gradient under wavy bands and discs. */
function abstractPixel(scene: Plan, u: number, v: number, frame: AbstractFrame): Colour {
  const along = ((u - 0.5) * frame.cosAngle + (v - 0.5) * frame.sinAngle) * 0.9 + 0.5;
  let colour = mix(scene.skyTop, scene.skyBottom, Math.min(1, Math.max(0, along)));
  for (const band of scene.bands) {
    const centre = band.centre + band.amplitude * Math.sin(2 * Math.PI * band.frequency * u + band.phase);
    const distance = Math.abs(v - centre) * frame.scaleY;
    const cover = 1 - smoothstep(band.thickness - frame.pixel * 1.5, band.thickness + frame.pixel * 1.5, distance);
    if (cover > 0) colour = mix(colour, band.colour, cover * band.opacity);
  }
  for (const disc of scene.discs) {
    const dx = (u - disc.x) * frame.scaleX;
    const dy = (v - disc.y) * frame.scaleY;
    const distance = Math.sqrt(dx * dx + dy * dy);
    const edge = frame.pixel * 1.5;
    const cover = disc.ring
      ? 1 - smoothstep(disc.radius * 0.12 - edge, disc.radius * 0.12 + edge, Math.abs(distance - disc.radius * 0.88))
      : 1 - smoothstep(disc.radius - edge, disc.radius + edge, distance);
    if (cover > 0) colour = mix(colour, disc.colour, cover * disc.opacity);
  }
  return colour;
}
