// @ts-check
// The API payloads the pages read, as JSDoc types: the server's own response types (../api/wire.ts),
// so a field renamed on one side fails `npm run typecheck` on the other. Types only.

/** @typedef {import('../api/wire.ts').SessionObject} SessionObject */
/** @typedef {import('../api/wire.ts').KeyObject} KeyObject */
/** @typedef {import('../api/wire.ts').CreatedKeyObject} CreatedKeyObject */
/** @typedef {import('../api/wire.ts').KeysList} KeysList */
/** @typedef {import('../api/wire.ts').UsageReport} UsageReport */
/** @typedef {import('../api/wire.ts').UsageRow} UsageRow */
/** @typedef {import('../api/wire.ts').LimitInfo} LimitInfo */
/** @typedef {import('../api/wire.ts').AuditEntryObject} AuditEntryObject */
/** @typedef {import('../api/wire.ts').ModelObject} ModelObject */
/** @typedef {import('../api/wire.ts').PriceCardView} PriceCardView */
/** @typedef {import('../api/wire.ts').BatchObject} BatchObject */
/** @typedef {import('../api/wire.ts').FileObject} FileObject */
/** @typedef {import('../api/wire.ts').OrganizationLimits} OrganizationLimits */
/** @typedef {import('../api/wire.ts').WebhookEndpointObject} WebhookEndpointObject */
/** @typedef {import('../api/wire.ts').CreatedWebhookEndpointObject} CreatedWebhookEndpointObject */
/** @typedef {import('../api/wire.ts').WebhookEndpointsList} WebhookEndpointsList */
/** @typedef {import('../api/wire.ts').AlertDeliveryObject} AlertDeliveryObject */
/** @typedef {import('../api/wire.ts').BudgetFiguresObject} BudgetFiguresObject */
/** @typedef {import('../api/wire.ts').OrganizationBudgetObject} OrganizationBudgetObject */
/** @typedef {import('../api/wire.ts').KeyBudgetObject} KeyBudgetObject */
/** @typedef {import('../api/wire.ts').BudgetsOverview} BudgetsOverview */
/**
 * @template T
 * @typedef {import('../api/wire.ts').ListOf<T>} ListOf
 */
/**
 * @template T
 * @typedef {import('../api/wire.ts').PageOf<T>} PageOf
 */

/** What the router hands every page. */
/**
 * @typedef {object} PageProps
 * @property {SessionObject} session
 * @property {string} [id]  the `:id` of the path, when the route has one
 * @property {() => void} onSignedOut
 * @property {() => void} onChanged  the session changed (reload it)
 */

export {};
