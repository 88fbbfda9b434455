//! The TypeScript code runtime: QuickJS through `rquickjs`, programs type-stripped by `swc_ts_fast_strip`.
//! (Being built: see issue #7.)
