/** Node flags `npm start` runs the service with (see service-memory.mjs). */
export declare const SERVICE_NODE_FLAGS: readonly string[];
/** glibc malloc variables `npm start` sets unless the operator did. */
export declare const SERVICE_MALLOC_ENVIRONMENT: Readonly<Record<string, string>>;
