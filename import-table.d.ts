// Types for import-table.js (plain JavaScript so that eslint.config.js can load it without a build).
export declare const MAX_FILE_LINES: number;
export declare const MAX_FUNCTION_LINES: number;
export declare const IMPORT_TABLE: Record<string, { may: string[]; why: string }>;
export declare const DECLARATIVE_TABLES: { files: Record<string, string>; functions: Record<string, string> };
export declare function restrictedZones(root: string): Array<{ target: string; from: string; except: string[]; message: string }>;
