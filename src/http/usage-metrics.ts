/**
 * Token and cost counters per model in /metrics, fed by the usage ledger's observer (one call per
 * metered request, batch lines included): `switchyard_tokens_total{model, direction}` (direction
 * `input` or `output`; cached and reasoning tokens are parts of those, in their own counters),
 * `switchyard_cost_usd_total{model}` and `switchyard_metered_requests_total{model}`. Labels carry no
 * organization or key: their number stays that of the catalogue. As with the HTTP figures, the hot path
 * adds plain numbers; prom-client sees them only when /metrics is scraped.
 */
import { Counter, type Registry } from 'prom-client';
import type { LedgerRecord } from '../services/metering/usage-ledger.ts';

/** One model's figures since the start of this instance. */
interface ModelFigures {
  requests: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  /** US dollars, batch lines at their 50% price. */
  costUsd: number;
}

type Observed = Pick<LedgerRecord, 'model' | 'inputTokens' | 'outputTokens' | 'cachedTokens' | 'reasoningTokens' | 'costUsd'>;

export class UsageMetrics {
  private readonly byModel = new Map<string, ModelFigures>();

  constructor(registry: Registry) {
    const byModel = this.byModel;
    const counter = (
      name: string,
      help: string,
      labelNames: string[],
      fill: (counter: Counter, model: string, figures: ModelFigures) => void,
    ) =>
      new Counter({
        name,
        help,
        labelNames,
        registers: [registry],
        collect() {
          this.reset();
          for (const [model, figures] of byModel) fill(this, model, figures);
        },
      });
    counter(
      'switchyard_tokens_total',
      'Tokens metered, by model and direction (input includes cached, output includes reasoning).',
      ['model', 'direction'],
      (metric, model, figures) => {
        metric.inc({ model, direction: 'input' }, figures.inputTokens);
        metric.inc({ model, direction: 'output' }, figures.outputTokens);
      },
    );
    counter(
      'switchyard_cached_input_tokens_total',
      'Input tokens read from a prompt cache, by model.',
      ['model'],
      (metric, model, figures) => metric.inc({ model }, figures.cachedTokens),
    );
    counter('switchyard_reasoning_tokens_total', 'Output tokens spent reasoning, by model.', ['model'], (metric, model, figures) =>
      metric.inc({ model }, figures.reasoningTokens),
    );
    counter(
      'switchyard_cost_usd_total',
      'Cost of the metered requests in US dollars (batch lines at 50%), by model.',
      ['model'],
      (metric, model, figures) => metric.inc({ model }, figures.costUsd),
    );
    counter('switchyard_metered_requests_total', 'Requests recorded in the usage ledger, by model.', ['model'], (metric, model, figures) =>
      metric.inc({ model }, figures.requests),
    );
  }

  /** Adds one ledger record's figures. */
  observe(record: Observed): void {
    let figures = this.byModel.get(record.model);
    if (figures === undefined) {
      figures = { requests: 0, inputTokens: 0, outputTokens: 0, cachedTokens: 0, reasoningTokens: 0, costUsd: 0 };
      this.byModel.set(record.model, figures);
    }
    figures.requests += 1;
    figures.inputTokens += record.inputTokens;
    figures.outputTokens += record.outputTokens;
    figures.cachedTokens += record.cachedTokens;
    figures.reasoningTokens += record.reasoningTokens;
    figures.costUsd += record.costUsd;
  }
}
