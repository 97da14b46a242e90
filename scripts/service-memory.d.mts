/** Node flags `npm start` runs the service with on any machine (see service-memory.mjs). */
export declare const SERVICE_NODE_FLAGS: readonly string[];
/** glibc malloc variables `npm start` sets unless the operator did. */
export declare const SERVICE_MALLOC_ENVIRONMENT: Readonly<Record<string, string>>;
/** The values `PARALLEL_SCAVENGE` takes. */
export declare const PARALLEL_SCAVENGE_SETTINGS: readonly string[];
/** How many CPUs this process may run on: its affinity, lowered by a container's CPU quota. */
export declare function cpuBudget(): number;
/** The node flags for a service that may use `cpus` CPUs (`PARALLEL_SCAVENGE`: auto, on or off). */
export declare function serviceNodeFlags(cpus?: number, parallelScavenge?: string): string[];
