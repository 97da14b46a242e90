// Stylesheets are bundled by esbuild (scripts/build-dashboard.mjs); to the type checker they are modules without exports.
declare module '*.css';
