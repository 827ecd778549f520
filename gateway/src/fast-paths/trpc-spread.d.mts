// Types for gateway/src/fast-paths/trpc-spread.mjs, which build.mjs imports as plain JavaScript.
import type { Plugin } from 'esbuild';

export const TRPC_SPREAD_HELPER: string;
export function objectSpread2<T extends object>(target: T, ...sources: unknown[]): T;
export function spreadIsPlainData(descriptor: PropertyDescriptor | undefined): boolean;
export function spreadCopyProperty(target: object, from: object, key: PropertyKey, described: boolean): void;
export function withFasterSpread(source: string): string | undefined;
export const NATIVE_SPREADS: Array<{ name: string; compiled: string; native: string }>;
export const MIDDLEWARE_CHAIN_MARKER: string;
export function withNativeSpreads(source: string): string | undefined;
export function fasterTrpcSpread(): Plugin;
