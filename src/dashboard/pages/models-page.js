// @ts-check
// The models page: catalogue, each model's resolved price card, getting-started snippets.
import { html, number, DataTable, ErrorNote, usePoll } from './components.js';

/** @typedef {import('./types.js').ModelObject} ModelObject */
/** @typedef {import('./types.js').PriceCardView} PriceCardView */

/** A price as configured: up to 12 decimals, no trailing zeros (prices per million tokens have up to 6). @param {number} value */
const price = (value) => `$${Number(value.toFixed(12)).toString()}`;

/** @param {Pick<PriceCardView, 'input_per_million' | 'cached_input_per_million' | 'cache_write_5m_per_million' | 'cache_write_1h_per_million' | 'output_per_million' | 'reasoning_per_million'>} prices */
const tokenPrices = (prices) =>
  [
    `input ${price(prices.input_per_million)}`,
    `cached ${price(prices.cached_input_per_million)}`,
    `cache write 5 min ${price(prices.cache_write_5m_per_million)} / 1 h ${price(prices.cache_write_1h_per_million)}`,
    `output ${price(prices.output_per_million)}`,
    `reasoning ${price(prices.reasoning_per_million)}`,
  ].join(' · ');

/** The whole card: token prices per million, then what else the model is priced by. @param {{ card: PriceCardView }} props */
function PriceCard({ card }) {
  const images = Object.entries(card.per_image);
  return html`<div class="price-card">
    <div>${tokenPrices(card)} <span class="muted">per 1M tokens</span></div>
    ${card.per_request > 0 ? html`<div>${price(card.per_request)} per request</div>` : null}
    ${images.length > 0 ? html`<div>per image: ${images.map(([key, value]) => `${key} ${price(value)}`).join(' · ')}</div>` : null}
    ${card.long_context.map((entry) => html`<div>prompts above ${number(entry.above_input_tokens)} tokens: ${tokenPrices(entry)}</div>`)}
    <div class="muted">
      batch ${Math.round(card.batch_factor * 100)}% of the price${
        card.source ? ` · from ${card.source.list} ${card.source.version} (${card.source.provider} / ${card.source.model})` : ''
      }
    </div>
  </div>`;
}

/** @type {import('./components.js').Column<ModelObject>[]} */
const COLUMNS = [
  {
    label: 'Model',
    cell: (entry) => html`<code>${entry.id}</code>
      ${entry.description ? html`<div class="muted">${entry.description}</div>` : null}`,
  },
  { label: 'Capabilities', cell: (entry) => entry.capabilities.join(', ') },
  { label: 'Context', cell: (entry) => number(entry.context_window) },
  { label: 'Prices (USD)', cell: (entry) => html`<${PriceCard} card=${entry.pricing} />` },
];

/** @param {string} model */
function snippets(model) {
  const base = `${location.origin}/v1`;
  return {
    curl: [
      `curl ${base}/chat/completions \\`,
      '  -H "Authorization: Bearer $SWITCHYARD_KEY" \\',
      '  -H "Content-Type: application/json" \\',
      `  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`,
    ].join('\n'),
    openai: [
      "import OpenAI from 'openai';",
      `const client = new OpenAI({ baseURL: '${base}', apiKey: process.env.SWITCHYARD_KEY });`,
      `const answer = await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Hello' }] });`,
      'console.log(answer.choices[0].message.content);',
    ].join('\n'),
    anthropic: [
      "import Anthropic from '@anthropic-ai/sdk';",
      `const client = new Anthropic({ baseURL: '${location.origin}', apiKey: process.env.SWITCHYARD_KEY });`,
      `const message = await client.messages.create({ model: '${model}', max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] });`,
      'console.log(message.content);',
    ].join('\n'),
  };
}

export function ModelsPage() {
  /** @type {[import('./components.js').Polled<import('./types.js').ListOf<ModelObject>>, () => void]} */
  const [{ data, error }] = usePoll('models', 0);
  const model = data?.data.find((entry) => entry.capabilities.includes('chat'))?.id ?? 'MODEL';
  return html`<main>
    <h1>Models</h1>
    <section class="card" aria-labelledby="start-title">
      <h2 id="start-title">Getting started</h2>
      ${Object.entries(snippets(model)).map(
        ([name, code]) => html`<h3>${name}</h3>
          <pre><code>${code}</code></pre>`,
      )}
    </section>
    <${ErrorNote} error=${error} />
    <${DataTable}
      label="Models"
      columns=${COLUMNS}
      rows=${data?.data}
      rowKey=${(/** @type {ModelObject} */ entry) => entry.id}
      loading=${null}
    />
  </main>`;
}
